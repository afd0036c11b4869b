//! Rules about the source, checked without clippy (issue 18, item 6):
//! no `.unwrap()` or `.expect(` on any path outside tests. The few kept on
//! our own constants sit in a function marked
//! `#[allow(clippy::expect_used)]` with a comment saying why, which is also
//! what `cargo clippy` accepts (`[lints.clippy]` in Cargo.toml denies the
//! rest there).

use std::path::Path;

/// `(file, line, text)` of every unwrap/expect outside `#[cfg(test)]`
/// modules and outside functions that allow it.
fn offenders(dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            offenders(&path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // A file's test module runs to its end (the layout every file keeps);
        // a test-only file is marked at its top.
        if lines.iter().take(30).any(|l| l.trim() == "#![cfg(test)]") {
            continue;
        }
        let test_from = lines
            .windows(2)
            .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod ") && w[1].trim_end().ends_with('{'))
            .unwrap_or(lines.len());
        let mut allowed_until: Option<usize> = None;
        for (i, line) in lines.iter().enumerate().take(test_from) {
            let t = line.trim_start();
            if t.starts_with("#[allow(clippy::expect_used") || t.starts_with("#[allow(clippy::unwrap_used") {
                // Up to the end of the item that follows (its closing brace at the attribute's indentation).
                let indent = line.len() - t.len();
                let end = lines[i + 1..]
                    .iter()
                    .position(|l| l.len() > indent && l.starts_with(&" ".repeat(indent)) && l[indent..].starts_with('}') || (indent == 0 && l.starts_with('}')))
                    .map_or(lines.len(), |p| i + 1 + p);
                allowed_until = Some(end);
            }
            if allowed_until.is_some_and(|end| i <= end) || t.starts_with("//") {
                continue;
            }
            if line.contains(".unwrap()") || line.contains(".expect(") {
                out.push(format!("{}:{}: {}", path.display(), i + 1, t));
            }
        }
    }
}

#[test]
fn no_unwrap_or_expect_outside_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    offenders(&src, &mut found);
    // Property tests are a test-only module of the planner.
    found.retain(|f| !f.contains("plan/properties.rs"));
    assert!(found.is_empty(), "unwrap/expect reachable outside tests (return an error, or allow it on a constant and say why):\n{}", found.join("\n"));
}
