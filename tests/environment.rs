//! Every environment variable pawndex reads is documented on one page, docs/environment.md
//! (issue 38, point 6): a `PAWNDEX_*` name in the code that the page does not list fails here,
//! and so does a name the page lists that no code reads any more.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::root_path;

/// The `PAWNDEX_*` names in `text` (upper-case letters, digits and `_` after the prefix).
fn names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("PAWNDEX_") {
        let tail = &rest[at..];
        let end = tail
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .map_or(tail.len(), |(i, _)| i);
        let name = tail[..end].trim_end_matches('_');
        if name.len() > "PAWNDEX_".len() {
            out.insert(name.to_string());
        }
        rest = &tail[end.max(1)..];
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_variable_the_code_reads_is_on_the_environment_page() {
    let mut files = vec![root_path("build.rs")];
    rust_files(&root_path("src"), &mut files);
    let mut in_code = BTreeSet::new();
    for file in &files {
        in_code.extend(names(&std::fs::read_to_string(file).unwrap()));
    }
    assert!(
        in_code.contains("PAWNDEX_STRUCTURES") && in_code.len() >= 5,
        "the scan finds the variables: {in_code:?}"
    );
    let page = std::fs::read_to_string(root_path("docs/environment.md")).unwrap();
    // The table's first column: | `PAWNDEX_NAME` | …
    let listed: BTreeSet<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect();
    let missing: Vec<_> = in_code.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&in_code).collect();
    assert!(
        missing.is_empty(),
        "read by the code but not listed in docs/environment.md: {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "listed in docs/environment.md but read nowhere: {stale:?}"
    );
}
