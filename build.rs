//! Embeds the structure catalogue (`structures/*.toml`) into the binary: one `(key, text)` pair
//! per file, sorted by key, in `$OUT_DIR/structures.rs`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=structures");
    let dir =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("structures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the structures/ folder")
        .map(|e| e.expect("a readable entry of structures/").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut out = String::from(
        "/// The catalogue files: (key, text), sorted by key.\npub const BUILTIN: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        let key = f
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name");
        writeln!(
            out,
            "    ({key:?}, include_str!({:?})),",
            f.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("set by cargo")).join("structures.rs");
    std::fs::write(dest, out).expect("writing the embedded catalogue");
}
