//! Embeds the structure catalogue (`structures/*.toml`) into the binary: one `(key, text)` pair
//! per file, sorted by key, in `$OUT_DIR/structures.rs`; and the browser front end (the files
//! under `web/`, for `pawndex serve`): one `(path, bytes)` pair per file, sorted by path, in
//! `$OUT_DIR/web_assets.rs`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    web_assets();
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

/// Writes `$OUT_DIR/web_assets.rs`: every file under `web/` (hidden ones left out) as
/// `("path/from/web", include_bytes!(…))`, sorted by path.
fn web_assets() {
    println!("cargo:rerun-if-changed=web");
    let root = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("web");
    let mut files = Vec::new();
    if root.is_dir() {
        walk(&root, &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// The files of `web/`: (path under web/, bytes), sorted by path.\npub const FILES: &[(&str, &[u8])] = &[\n",
    );
    for f in &files {
        let rel = f.strip_prefix(&root).expect("under web/");
        let rel: Vec<&str> = rel
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_str()
                    .expect("a UTF-8 file name under web/")
            })
            .collect();
        writeln!(
            out,
            "    ({:?}, include_bytes!({:?})),",
            rel.join("/"),
            f.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("set by cargo")).join("web_assets.rs");
    std::fs::write(dest, out).expect("writing the embedded web assets");
}

/// Every file under `dir`, recursively, without hidden files and folders.
fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder under web/") {
        let path = entry.expect("a readable entry under web/").path();
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_none_or(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
