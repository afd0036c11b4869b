#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) on the nightly
# toolchain with cargo-fuzz (`cargo install cargo-fuzz`). Seeds come from
# fuzz/seeds/<target>; a crash is written to fuzz/artifacts/<target>/ and the
# script exits 1. Turn a crash into a regression: copy the input into
# fuzz/regressions/<target>/ (the integration test `fuzz_regressions`
# replays every file there on stable, in CI).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
# What the run needs, installed when missing (a fresh machine): the nightly
# toolchain (libFuzzer's sanitizer flags) and cargo-fuzz from crates.io.
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
# Its own build directory, never the main one: every crate here is built
# with the fuzzing instrumentation.
export CARGO_TARGET_DIR="${SCHEMABRAIN_FUZZ_TARGET_DIR:-$HOME/.cache/schemabrain-fuzz}"
status=0
for target in $(cargo +nightly fuzz list); do
    mkdir -p "corpus/$target"
    cp -n seeds/"$target"/* "corpus/$target/" 2>/dev/null || true
    echo "== $target ($seconds s)"
    if ! cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=65536 2>&1 | tail -n 5; then
        status=1
    fi
done
exit "$status"
