use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto");
    let connect_dir = proto_root.join("spark").join("connect");

    // The vendored Spark Connect .proto files. Keep in sync with proto/PROTO_VERSION.txt.
    let protos = [
        "base",
        "catalog",
        "commands",
        "common",
        "expressions",
        "ml",
        "ml_common",
        "pipelines",
        "relations",
        "types",
    ]
    .iter()
    .map(|f| connect_dir.join(format!("{f}.proto")))
    .collect::<Vec<_>>();

    for p in &protos {
        println!("cargo:rerun-if-changed={}", p.display());
    }

    // schemabrain: the descriptor set is compiled in-process by the pure-Rust
    // `protox` (imports and source info included, as protoc's
    // `--include_imports --include_source_info`), and tonic-prost-build
    // generates the code from it, so no `protoc` binary is needed.
    // Upstream: `.compile_protos(&protos, &[proto_root])`. See PATCHED.md.
    let descriptors = protox::Compiler::new([&proto_root])?
        .include_source_info(true)
        .include_imports(true)
        .open_files(&protos)?
        .file_descriptor_set();

    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .bytes(".")
        .compile_fds(descriptors)?;

    Ok(())
}
