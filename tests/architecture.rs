//! The layering rule, read from the code itself:
//!
//! ```text
//! cli  ->  web  ->  engine, output, ingest, dataset  ->  store  ->  model
//! ```
//!
//! A module may use its own layer and the layers below it; the four in the middle do not use
//! each other, `web` (the server of `pawndex serve`) uses them but not `cli`, and nothing uses
//! `cli`. Every `crate::LAYER` path in a layer's code counts (in a
//! `use` line or inline), comments and `#[cfg(test)] mod tests` excepted.
//!
//! And the store is the only owner of SQLite: no layer above it names `rusqlite` or begins a
//! transaction itself; they read through the store's `Snapshot`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Each layer and its height: a layer may use those strictly lower, and itself.
const LAYERS: &[(&str, u8)] = &[
    ("model", 0),
    ("store", 1),
    ("engine", 2),
    ("output", 2),
    ("ingest", 2),
    ("dataset", 2),
    ("web", 3),
    ("cli", 4),
];

fn height(layer: &str) -> Option<u8> {
    LAYERS.iter().find(|(l, _)| *l == layer).map(|&(_, h)| h)
}

/// Whether code in `from` may use `to`.
fn allowed(from: &str, to: &str) -> bool {
    match (height(from), height(to)) {
        (Some(f), Some(t)) => from == to || t < f,
        // Not a layer (a top-level item of lib.rs): nothing to check.
        _ => true,
    }
}

/// The code of a file without comments and without its trailing `#[cfg(test)] mod tests`.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" //").next().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// The layers a file's code names through `crate::` (or `$crate::` in a macro), with the
/// line of each.
fn layers_used(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((name, n + 1));
            }
            // `use crate::{a, b}`: every name in the braces.
            if let Some(list) = after.strip_prefix('{') {
                let inner = list.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.push((name, n + 1));
                    }
                }
            }
            rest = after;
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every use against the rule under `src`: "file:line: layer uses other".
fn violations(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (layer, _) in LAYERS {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        files.sort();
        for file in files {
            let text = fs::read_to_string(&file).unwrap();
            for (used, line) in layers_used(&code_of(&text)) {
                if !allowed(layer, &used) {
                    found.push(format!(
                        "{}:{line}: {layer} uses {used}",
                        file.strip_prefix(src).unwrap().display()
                    ));
                }
            }
        }
    }
    found
}

/// A layer's code lines with their numbers in the file: comment lines and trailing `//`
/// comments left out, and nothing from a trailing `#[cfg(test)] mod tests` on.
fn numbered_code(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|(_, next)| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push((n + 1, line.split(" //").next().unwrap_or(line)));
    }
    out
}

/// Whether `line` begins a transaction: SQL text that starts with BEGIN (in any case), the
/// word BEGIN, or rusqlite's transaction methods.
fn begins_transaction(line: &str) -> bool {
    let sql_begin = line.match_indices('"').any(|(at, _)| {
        line[at + 1..]
            .trim_start()
            .get(..5)
            .is_some_and(|w| w.eq_ignore_ascii_case("BEGIN"))
    });
    let word_begin = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == "BEGIN");
    let method = [
        ".transaction(",
        ".unchecked_transaction(",
        ".transaction_with_behavior(",
    ]
    .iter()
    .any(|m| line.contains(m));
    sql_begin || word_begin || method
}

/// Every place above the store that names `rusqlite` or begins a transaction: "file:line: ...".
fn sqlite_above_the_store(src: &Path) -> Vec<String> {
    let store = height("store").unwrap();
    let mut found = Vec::new();
    for (layer, h) in LAYERS {
        if *h <= store {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        files.sort();
        for file in files {
            let text = fs::read_to_string(&file).unwrap();
            let name = file.strip_prefix(src).unwrap().display().to_string();
            for (n, line) in numbered_code(&text) {
                if line.contains("rusqlite") {
                    found.push(format!("{name}:{n}: {layer} names rusqlite"));
                }
                if begins_transaction(line) {
                    found.push(format!("{name}:{n}: {layer} begins a transaction"));
                }
            }
        }
    }
    found
}

#[test]
fn only_the_store_speaks_to_sqlite() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = sqlite_above_the_store(&src);
    assert!(
        found.is_empty(),
        "SQLite above the store (read through store::read::Snapshot, whose reads run in one \
         transaction; classify errors with store::read::is_interrupted and is_corrupt):\n{}",
        found.join("\n")
    );
}

/// The check itself: rusqlite named, or a transaction begun, above the store is found, with
/// its file and line; the store itself, comments and tests are not.
#[test]
fn the_check_finds_sqlite_above_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    for (layer, _) in LAYERS {
        fs::create_dir_all(src.join(layer)).unwrap();
    }
    let cases = [
        (
            "engine/a.rs",
            "//! x\nfn f(c: &rusqlite::Connection) {}\n",
            "engine/a.rs:2: engine names rusqlite",
        ),
        (
            "web/a.rs",
            "use rusqlite::Connection;\n",
            "web/a.rs:1: web names rusqlite",
        ),
        (
            "cli/a.rs",
            "fn f() {\n    conn.execute_batch(\"BEGIN\")?;\n}\n",
            "cli/a.rs:2: cli begins a transaction",
        ),
        (
            "output/a.rs",
            "fn f() { conn.execute_batch(\"begin immediate\"); }\n",
            "output/a.rs:1: output begins a transaction",
        ),
        (
            "dataset/a.rs",
            "fn f() { let tx = conn.unchecked_transaction()?; }\n",
            "dataset/a.rs:1: dataset begins a transaction",
        ),
    ];
    for (file, text, want) in cases {
        fs::write(src.join(file), text).unwrap();
        let found = sqlite_above_the_store(src);
        assert!(found.iter().any(|v| v == want), "{file}: {found:?}");
        fs::remove_file(src.join(file)).unwrap();
    }
    // Allowed: the store, comments, the tests module, a word that only looks alike.
    fs::write(
        src.join("store/a.rs"),
        "use rusqlite::Connection;\nfn f() { c.execute_batch(\"BEGIN\"); }\n",
    )
    .unwrap();
    let fine = "//! see rusqlite\nfn begin() {} // rusqlite BEGIN\nfn f() { page.begin(); }\n\
                #[cfg(test)]\nmod tests {\n    use rusqlite::Connection;\n}\n";
    fs::write(src.join("engine/a.rs"), fine).unwrap();
    assert_eq!(sqlite_above_the_store(src), Vec::<String>::new());
}

#[test]
fn every_import_points_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (layer, _) in LAYERS {
        assert!(
            src.join(layer).is_dir(),
            "the layer folder src/{layer} is missing"
        );
    }
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "imports against the layering (cli -> web -> engine, output, ingest, dataset -> store \
         -> model):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_top_level_holds_only_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stray = BTreeMap::new();
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let layer = name.trim_end_matches(".rs");
        if !(name == "lib.rs" || name == "main.rs" || height(layer).is_some() && path.is_dir()) {
            stray.insert(name, ());
        }
    }
    assert!(
        stray.is_empty(),
        "src/ holds more than lib.rs, main.rs and the layers: {:?}",
        stray.keys()
    );
}

/// The check itself: an import against the rule, written the ways code writes it, is found.
#[test]
fn the_check_finds_an_import_against_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    for (layer, _) in LAYERS {
        fs::create_dir_all(src.join(layer)).unwrap();
    }
    let cases = [
        (
            "store/a.rs",
            "use crate::cli::common::usage;\n",
            "store uses cli",
        ),
        (
            "model/a.rs",
            "fn f() { crate::store::open(); }\n",
            "model uses store",
        ),
        (
            "ingest/a.rs",
            "use crate::{model, dataset::Writer};\n",
            "ingest uses dataset",
        ),
        (
            "output/a.rs",
            "use crate::engine::stats::Group;\n",
            "output uses engine",
        ),
        (
            "store/b.rs",
            "macro_rules! m { () => { $crate::engine::x() } }\n",
            "store uses engine",
        ),
        ("web/a.rs", "use crate::cli::serve;\n", "web uses cli"),
        (
            "engine/a.rs",
            "fn f() { crate::web::serve(); }\n",
            "engine uses web",
        ),
    ];
    for (file, text, want) in cases {
        fs::write(src.join(file), text).unwrap();
        let found = violations(src);
        assert!(found.iter().any(|v| v.ends_with(want)), "{file}: {found:?}");
        fs::remove_file(src.join(file)).unwrap();
    }
    // Allowed: down the layers, the own layer, comments, the tests module.
    let fine = "//! see [`crate::cli`]\nuse crate::model::features;\nuse crate::store::x; // crate::cli\n\
                #[cfg(test)]\nmod tests {\n    use crate::cli::common;\n}\n";
    fs::write(src.join("engine/a.rs"), fine).unwrap();
    assert_eq!(violations(src), Vec::<String>::new());
}

/// The workspace crates under `crates/` (the page builder) know nothing of pawndex: no
/// dependency on it and no path into it; and in pawndex only the store, the owner of SQLite,
/// uses them.
#[test]
fn the_workspace_crates_stand_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates = Vec::new();
    for entry in fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let deps = manifest
            .lines()
            .skip_while(|l| !l.starts_with("[dependencies]"))
            .take_while(|l| !l.starts_with("[dev-dependencies]"));
        for line in deps {
            assert!(
                !line.trim_start().starts_with("pawndex"),
                "{}: depends on pawndex",
                dir.display()
            );
        }
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for file in files {
            let code = code_of(&fs::read_to_string(&file).unwrap());
            assert!(
                !code.contains("pawndex::") && !code.contains("extern crate pawndex"),
                "{} uses pawndex",
                file.display()
            );
        }
        let name = dir.file_name().unwrap().to_string_lossy().replace('-', "_");
        crates.push(name);
    }
    assert!(crates.contains(&"sqlite_pages".to_owned()), "{crates:?}");
    let src = root.join("src");
    for (layer, _) in LAYERS.iter().filter(|(l, _)| *l != "store") {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        for file in files {
            let code = code_of(&fs::read_to_string(&file).unwrap());
            for name in &crates {
                assert!(
                    !code.contains(&format!("{name}::")),
                    "{} uses {name}: only the store does",
                    file.display()
                );
            }
        }
    }
}
