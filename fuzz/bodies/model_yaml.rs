//! The model loader on arbitrary bytes as any of its file kinds: it returns
//! a model or diagnostics, never panics, never overflows the stack.
//!
//! The body of `fuzz_targets/model_yaml.rs`; `tests/it/fuzz_regressions.rs`
//! compiles it too and replays the seeds and regressions through it on
//! stable, so a target that stops compiling fails `cargo test`.

use std::path::PathBuf;

use schemabrain::model::{load_checked_from_files, FileKind};

pub fn run(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest).into_owned();
    let kind = match kind % 6 {
        0 => FileKind::Entity,
        1 => FileKind::Join,
        2 => FileKind::Metric,
        3 => FileKind::Policy,
        4 => FileKind::Query,
        _ => FileKind::Settings,
    };
    // Beside a valid entity, so metric and join files reach reference checks.
    let entity = "version: 1\nname: order\nbinding: {single_table: main.orders}\nidentity: id\ncolumns:\n  - {name: id, type: integer}\n  - {name: amount, type: decimal}\n  - {name: ordered_at, type: timestamp}\n";
    let files = vec![
        (FileKind::Entity, PathBuf::from("entities/order.yaml"), entity.to_string()),
        (kind, PathBuf::from("fuzz.yaml"), text),
    ];
    let _ = load_checked_from_files(&files);
}
