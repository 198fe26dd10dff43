//! The odd real-world files of `../shared/corpus/odd` (BOMs, Latin-1, CRLF, variants, null
//! moves, prose around PGN, ...), all in one run: no panic, counts that add up, a reason for
//! every reject, a sound database, and every indexed game checked by independent replay.

mod common;

use std::path::{Path, PathBuf};

use common::*;

const ODD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/odd");

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn the_odd_corpus_is_indexed_without_panics_and_with_reasons() {
    let odd = Path::new(ODD);
    if !odd.is_dir() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{ODD} is missing and CI=true: ../shared must be beside the repository"
        );
        eprintln!("SKIPPED: {ODD} does not exist (put ../shared beside the repository)");
        return;
    }
    let mut files = Vec::new();
    files_under(odd, &mut files);
    assert!(!files.is_empty(), "{ODD} is empty");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("odd.db");
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let run = index(&db, &["--threads", "2"], &refs);
    run.assert_no_panic("odd corpus");
    assert!(
        matches!(run.code, Some(0) | Some(1)),
        "exit code {:?} (expected 0, or 1 for unreadable inputs)\n{}",
        run.code,
        run.stderr
    );
    let s = run.summary();
    eprintln!(
        "{} files: {} read, {} indexed, {} duplicates, {} rejected (exit {:?})",
        files.len(),
        s.read,
        s.indexed,
        s.duplicates,
        s.rejected,
        run.code
    );
    assert_eq!(
        s.read,
        s.indexed + s.duplicates + s.rejected,
        "summary adds up:\n{}",
        run.stderr
    );
    assert!(s.indexed > 0, "nothing indexed:\n{}", run.stderr);
    if run.code == Some(1) {
        // Exit 1 means some input could not be read; the error must name it.
        let named = files
            .iter()
            .any(|f| run.stderr.contains(f.to_string_lossy().as_ref()));
        assert!(named, "exit 1 without naming a file:\n{}", run.stderr);
    }

    let conn = open_db(&db);
    assert_eq!(integrity_check(&conn), "ok");
    assert_eq!(
        count(&conn, "SELECT count(*) FROM games") as u64,
        s.indexed,
        "games table vs summary"
    );
    assert_eq!(
        count(&conn, "SELECT count(*) FROM rejects") as u64,
        s.rejected,
        "rejects table vs summary"
    );
    let no_reason = query_all(
        &conn,
        "SELECT source, offset, reason FROM rejects WHERE reason IS NULL OR trim(reason) = ''",
    );
    assert!(
        no_reason.is_empty(),
        "rejects without a reason: {no_reason:?}"
    );
    check_whole_games(&conn);
    // Every indexed game replays from its stored moves and matches its rows.
    verify_db(&conn);
}
