//! What `pawndex index` says about files that hold no PGN: prose, an empty file, archives it
//! cannot read. One message per problem, each printed once, and nothing counted as a game.

mod common;

use std::io::Write;
use std::path::Path;

use common::*;

/// Lines of `stderr` that contain `needle`.
fn lines_with(stderr: &str, needle: &str) -> usize {
    stderr.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn prose_is_no_game_and_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let prose = dir.path().join("p.txt");
    std::fs::write(&prose, "Hello, this is prose.\nNot a game.\n").unwrap();
    let run = index(&dir.path().join("p.db"), &[], &[&prose]);
    run.expect_code(0, "prose");
    let s = run.summary();
    assert_eq!(
        (s.read, s.rejected),
        (0, 0),
        "prose is no game:\n{}",
        run.stderr
    );
    assert_eq!(
        lines_with(&run.stderr, "no PGN games found"),
        1,
        "one message, once:\n{}",
        run.stderr
    );
    assert_eq!(lines_with(&run.stderr, "warning:"), 1, "{}", run.stderr);
    let conn = open_db(&dir.path().join("p.db"));
    assert_eq!(count(&conn, "SELECT count(*) FROM rejects"), 0);
}

#[test]
fn an_empty_file_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pgn");
    std::fs::write(&empty, "").unwrap();
    let run = index(&dir.path().join("e.db"), &[], &[&empty]);
    run.expect_code(0, "empty file");
    assert_eq!(run.summary().read, 0);
    assert_eq!(
        lines_with(&run.stderr, "no PGN games found: the file is empty"),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn a_preamble_before_the_games_is_skipped_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pre.pgn");
    let sample = std::fs::read_to_string(root_path("examples/sample.pgn")).unwrap();
    std::fs::write(
        &file,
        format!("Games of the club, collected by hand.\n\n{sample}"),
    )
    .unwrap();
    let run = index(&dir.path().join("pre.db"), &[], &[&file]);
    run.expect_code(0, "preamble");
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.rejected),
        (12, 12, 0),
        "{}",
        run.stderr
    );
    assert_eq!(
        lines_with(&run.stderr, "skipped 1 stretch(es) of text"),
        1,
        "{}",
        run.stderr
    );
}

/// A file that starts like an archive of `kind`.
fn archive_bytes(kind: &str) -> Vec<u8> {
    let pgn = b"[Event \"x\"]\n\n1. e4 e5 *\n";
    let mut bytes = match kind {
        "zip" => b"PK\x03\x04\x14\x00\x00\x00\x00\x00".to_vec(),
        "7z" => b"7z\xbc\xaf\x27\x1c\x00\x04".to_vec(),
        "rar" => b"Rar!\x1a\x07\x01\x00".to_vec(),
        "tar" => {
            let mut h = vec![0u8; 512];
            h[..9].copy_from_slice(b"games.pgn");
            h[257..263].copy_from_slice(b"ustar\0");
            h
        }
        _ => unreachable!(),
    };
    bytes.extend_from_slice(pgn);
    bytes.resize(bytes.len().max(1024), 0);
    bytes
}

#[test]
fn archives_are_errors_that_say_how_to_unpack() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (kind, unpack) in [
        ("zip", "unzip "),
        ("7z", "7z x "),
        ("rar", "unrar x "),
        ("tar", "tar -xf "),
        ("tar.gz", "tar -xf "),
    ] {
        let file = dir.path().join(format!("games.{kind}"));
        let bytes = if kind == "tar.gz" {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&archive_bytes("tar")).unwrap();
            gz.finish().unwrap()
        } else {
            archive_bytes(kind)
        };
        std::fs::write(&file, bytes).unwrap();
        let run = index(&dir.path().join(format!("{kind}.db")), &[], &[&file]);
        run.assert_no_panic(kind);
        let what = kind.trim_end_matches(".gz");
        let want = format!("{what} archives are not supported: unpack it first ({unpack}");
        if run.code != Some(1) || lines_with(&run.stderr, &want) != 1 {
            failures.push(format!("{kind}: exit {:?}\n{}", run.code, run.stderr));
        }
        if run.stderr.contains("binary data") {
            failures.push(format!("{kind}: still called binary data\n{}", run.stderr));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_file_error_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pgn");
    let run = index(&dir.path().join("m.db"), &[], &[Path::new(&missing)]);
    run.expect_code(1, "missing file");
    assert_eq!(
        lines_with(&run.stderr, "missing.pgn: cannot read"),
        1,
        "{}",
        run.stderr
    );
}

/// The end summary writes its counts with thousands separators, as `info` does (the counts of
/// this file: the 12 sample games 100 times over, so 1,188 are copies).
#[test]
fn the_summary_counts_have_thousands_separators() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.pgn");
    let sample = std::fs::read_to_string(root_path("examples/sample.pgn")).unwrap();
    std::fs::write(&file, sample.repeat(100)).unwrap();
    let run = index(&dir.path().join("m.db"), &[], &[&file]);
    run.expect_code(0, "100 copies of the sample");
    assert!(
        run.stderr.contains(
            "1 file(s), 1,200 games read: 12 indexed, 1,188 duplicates, 0 rejected; 681 plies;"
        ),
        "{}",
        run.stderr
    );
    let s = run.summary();
    assert_eq!((s.read, s.indexed, s.duplicates), (1200, 12, 1188));
}
