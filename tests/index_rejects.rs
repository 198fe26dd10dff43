//! Bad games are rejected with reasons, good ones around them are indexed; duplicates are
//! skipped (within a file and across runs) unless `--keep-duplicates`.

mod common;

use std::path::Path;

use common::*;
use pawndex::RejectCategory;

/// The good games of bad.pgn: (Event, plies per fixtures.md).
const GOOD: [(&str, i64); 9] = [
    ("pawndex bad: good 1", 13),
    ("pawndex bad: good 2", 4),
    ("pawndex bad: good 3", 17),
    ("pawndex bad: good 4", 12),
    ("pawndex bad: good 5", 16),
    ("pawndex bad: good 6", 14),
    ("pawndex bad: good 7", 18),
    ("pawndex bad: good 8", 14),
    ("pawndex bad: good 9", 16),
];

/// The bad games of bad.pgn: (Event, what the reason must contain).
const BAD: [(&str, &[&str]); 7] = [
    (
        "pawndex bad: illegal 12th white move",
        &["illegal move Qd8 at ply 23"],
    ),
    (
        "pawndex bad: ambiguous knight move",
        &["ambiguous move Nd2"],
    ),
    ("pawndex bad: null move", &["null move"]),
    (
        "pawndex bad: crazyhouse drop",
        &["unsupported variant: crazyhouse"],
    ),
    ("pawndex bad: atomic", &["atomic"]),
    ("pawndex bad: garbage FEN", &["invalid FEN", "garbage"]),
    ("pawndex bad: no white king", &["invalid FEN", "king"]),
];

fn bad_pgn() -> std::path::PathBuf {
    root_path("tests/fixtures/bad.pgn")
}

type Rows = Vec<Vec<rusqlite::types::Value>>;

/// Everything a re-run must leave untouched: games, rejects, the `ply_features` digest and
/// the number of distinct pawn sets.
fn snapshot(db: &Path) -> (Rows, Rows, (u64, u64), i64) {
    let conn = open_db(db);
    (
        query_all(&conn, GAMES_ALL),
        query_all(&conn, "SELECT * FROM rejects ORDER BY id"),
        ply_features_digest(&conn),
        count(&conn, "SELECT count(*) FROM pawn_sets"),
    )
}

#[test]
fn bad_games_are_rejected_with_reasons_and_good_ones_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.db");
    let run = index(&db, &[], &[&bad_pgn()]);
    run.expect_code(0, "bad.pgn");
    let s = run.summary();
    assert_eq!(s.read, 18, "bad.pgn holds 18 game records:\n{}", run.stderr);
    assert_eq!(
        s.read,
        s.indexed + s.duplicates + s.rejected,
        "summary adds up:\n{}",
        run.stderr
    );
    assert_eq!(s.rejected, BAD.len() as u64, "{}", run.stderr);
    assert_eq!(s.duplicates, 0, "{}", run.stderr);

    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM games") as u64, s.indexed);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM rejects") as u64,
        s.rejected
    );
    assert_eq!(integrity_check(&conn), "ok");
    verify_db(&conn);

    for (event, plies) in GOOD {
        let got: Vec<i64> = conn
            .prepare("SELECT plies FROM games WHERE event = ?1")
            .unwrap()
            .query_map([event], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(got, vec![plies], "{event}: indexed once, with its plies");
    }
    let text = std::fs::read(bad_pgn()).unwrap();
    let source = bad_pgn().to_string_lossy().into_owned();
    for (event, wanted) in BAD {
        let in_games = count(
            &conn,
            &format!("SELECT count(*) FROM games WHERE event = '{event}'"),
        );
        assert_eq!(in_games, 0, "{event}: must not be indexed");
        let rows: Vec<(String, i64, String)> = conn
            .prepare("SELECT source, offset, reason FROM rejects WHERE event = ?1")
            .unwrap()
            .query_map([event], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 1, "{event}: one reject row");
        let (src, offset, reason) = &rows[0];
        assert_eq!(src, &source, "{event}: reject source");
        for w in wanted {
            assert!(
                reason.contains(w),
                "{event}: reason {reason:?} should contain {w:?}"
            );
        }
        let head = format!("[Event \"{event}\"]");
        assert!(
            text[*offset as usize..].starts_with(head.as_bytes()),
            "{event}: rejects.offset {offset} does not point at the game"
        );
    }
    // The illegal move is White's 12th move: half-move 23.
    let ply: Option<i64> = conn
        .query_row(
            "SELECT ply FROM rejects WHERE event = 'pawndex bad: illegal 12th white move'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ply, Some(23));
    // Every reject has a reason a person can read.
    let empty = count(
        &conn,
        "SELECT count(*) FROM rejects WHERE reason IS NULL OR trim(reason) = ''",
    );
    assert_eq!(empty, 0);
}

#[test]
fn duplicates_in_one_file_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dupes.db");
    let dupes = root_path("tests/fixtures/dupes.pgn");
    let run = index(&db, &[], &[&dupes]);
    run.expect_code(0, "dupes.pgn");
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (3, 2, 1, 0),
        "{}",
        run.stderr
    );
    let conn = open_db(&db);
    let whites = query_all(&conn, "SELECT white, offset FROM games ORDER BY id");
    assert_eq!(whites.len(), 2);
    use rusqlite::types::Value::Text;
    assert_eq!(whites[0][0], Text("Original, Player".into()));
    assert_eq!(whites[1][0], Text("Renamed, Player".into()));
    // The first copy is the one kept.
    assert_eq!(whites[0][1], rusqlite::types::Value::Integer(0));
    check_whole_games(&conn);
}

#[test]
fn keep_duplicates_stores_every_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("keep.db");
    let dupes = root_path("tests/fixtures/dupes.pgn");
    let run = index(&db, &["--keep-duplicates"], &[&dupes]);
    run.expect_code(0, "dupes.pgn --keep-duplicates");
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (3, 3, 0, 0),
        "{}",
        run.stderr
    );
    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM games"), 3);
    assert_eq!(
        count(&conn, "SELECT count(DISTINCT offset) FROM games"),
        3,
        "three different records"
    );
    check_whole_games(&conn);
    verify_db(&conn);
}

#[test]
fn indexing_the_same_files_again_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("again.db");
    let files = [root_path("tests/fixtures/dupes.pgn"), bad_pgn()];
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let first = index(&db, &[], &refs);
    first.expect_code(0, "first run");
    let before = snapshot(&db);
    assert!(!before.0.is_empty() && !before.1.is_empty());
    let s1 = first.summary();

    let second = index(&db, &[], &refs);
    second.expect_code(0, "second run");
    let s2 = second.summary();
    assert_eq!(s2.read, s1.read, "{}", second.stderr);
    assert_eq!(s2.indexed, 0, "nothing new to index:\n{}", second.stderr);
    assert_eq!(
        s2.read,
        s2.indexed + s2.duplicates + s2.rejected,
        "{}",
        second.stderr
    );
    assert_eq!(
        s2.duplicates,
        s1.indexed + s1.duplicates,
        "every game is now a duplicate:\n{}",
        second.stderr
    );
    let after = snapshot(&db);
    assert_eq!(before.0, after.0, "games changed on re-run");
    assert_eq!(before.1, after.1, "rejects changed on re-run");
    assert_eq!(before.2, after.2, "ply_features changed on re-run");
    assert_eq!(before.3, after.3, "pawn sets changed on re-run");

    // A different file name for the same content: still duplicates, and rejects are keyed
    // by source so they may be recorded again, but no game is added.
    let copy = dir.path().join("copy.pgn");
    std::fs::copy(&files[0], &copy).unwrap();
    let third = index(&db, &[], &[&copy]);
    third.expect_code(0, "copy of dupes.pgn");
    let s3 = third.summary();
    assert_eq!(
        (s3.read, s3.indexed, s3.duplicates),
        (3, 0, 3),
        "{}",
        third.stderr
    );
    assert_eq!(snapshot(&db).0, before.0);
}

/// The summary line `rejected, CATEGORY: N` for `category`.
fn rejected_line(category: RejectCategory, n: u64) -> String {
    format!("  rejected, {category}: {n}")
}

/// Indexes `pgn` (as a file) and returns the run with the database's reject rows
/// `(offset, ply, reason)`.
fn index_text(pgn: &str) -> (Run, Vec<(i64, Option<i64>, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.pgn");
    std::fs::write(&file, pgn).unwrap();
    let db = dir.path().join("t.db");
    let run = index(&db, &[], &[&file]);
    run.expect_code(0, "index");
    let conn = open_db(&db);
    let rows = conn
        .prepare("SELECT offset, ply, reason FROM rejects ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (run, rows)
}

#[test]
fn an_unknown_movetext_token_rejects_the_game_naming_it() {
    let good = "[Event \"good\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n";
    let cases = [
        (
            "1. e4 e5 2. Nf3 foo Nc6 *",
            "unknown token `foo` at ply 4 (2... Black to move)",
            4,
        ),
        (
            "1. e4 e5 2. Nf3 N#c6 3. d4 *",
            "unknown token `N#c6` at ply 4 (2... Black to move)",
            4,
        ),
        (
            "1. e4x e5 *",
            "unknown token `e4x` at ply 1 (1. White to move)",
            1,
        ),
        (
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 } a6 *",
            "unknown token `}` at ply 6",
            6,
        ),
        ("1. e4 $x e5 *", "unknown token `$x` at ply 2", 2),
    ];
    let mut failures = Vec::new();
    for (movetext, want, ply) in cases {
        let bad = format!("[Event \"bad\"]\n\n{movetext}\n\n");
        let (run, rows) = index_text(&format!("{good}{bad}{good}"));
        let s = run.summary();
        let line = rejected_line(RejectCategory::UnknownToken, 1);
        let ok = (s.read, s.indexed, s.duplicates, s.rejected) == (3, 1, 1, 1)
            && run.stderr.contains(&line)
            && rows.len() == 1
            && rows[0].0 == good.len() as i64
            && rows[0].1 == Some(ply)
            && rows[0].2.contains(want);
        if !ok {
            failures.push(format!(
                "{movetext}: want {want:?}\n{rows:?}\n{}",
                run.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn known_tokens_are_not_unknown() {
    // Move numbers glued or spaced, every result form, castling with zeros, annotations,
    // NAGs, comments of both kinds, escape lines, variations holding anything.
    let pgn = "[Event \"all\"]\n\n1.e4 e5!? 2. Nf3 $1 Nc6?? {a comment} 3.Bc4 (3. Bb5 foo) Bc5 ; rest of line\n\
               4. 0-0 Nf6 5... 1/2-1/2\n\n\
               [Event \"b\"]\n\n1. d4 d5 0-1\n\n[Event \"c\"]\n\n1. c4 ½-½\n\n[Event \"d\"]\n\n1. g3 1-0\n";
    let (run, rows) = index_text(pgn);
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.rejected),
        (4, 4, 0),
        "{rows:?}\n{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("warning"),
        "a clean file gets no warning:\n{}",
        run.stderr
    );
}

#[test]
fn a_game_with_an_overlong_tag_line_is_one_reject() {
    let long = "x".repeat(1024 * 1024);
    let good = "[Event \"good\"]\n[White \"A\"]\n\n1. e4 e5 *\n\n";
    let bad = format!("[Event \"long\"]\n[Annotator \"{long}\"]\n[White \"B\"]\n\n1. d4 d5 *\n\n");
    let (run, rows) = index_text(&format!("{good}{bad}{good}"));
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (3, 1, 1, 1),
        "one game, one outcome:\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&rejected_line(RejectCategory::Syntax, 1)),
        "{}",
        run.stderr
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, good.len() as i64);
    assert!(rows[0].2.contains("unterminated tag"), "{rows:?}");
}

#[test]
fn summary_counts_bad_pgn_by_category() {
    let dir = tempfile::tempdir().unwrap();
    let run = index(&dir.path().join("bad.db"), &[], &[&bad_pgn()]);
    run.expect_code(0, "bad.pgn");
    for (category, n) in [
        (RejectCategory::IllegalMove, 1),
        (RejectCategory::AmbiguousMove, 1),
        (RejectCategory::NullMove, 1),
        (RejectCategory::UnsupportedVariant, 2),
        (RejectCategory::InvalidFen, 2),
    ] {
        assert!(
            run.stderr.contains(&rejected_line(category, n)),
            "{category}: {n}\n{}",
            run.stderr
        );
    }
}

/// Indexes `pgn` (bytes, as a file) and returns the run, the `(event, plies)` of the games in
/// input order and the reject reasons.
fn index_bytes(pgn: &[u8]) -> (Run, Vec<(String, i64)>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.pgn");
    std::fs::write(&file, pgn).unwrap();
    let db = dir.path().join("t.db");
    let run = index(&db, &[], &[&file]);
    run.assert_no_panic("index");
    if !db.exists() {
        return (run, Vec::new(), Vec::new());
    }
    let conn = open_db(&db);
    let games = conn
        .prepare("SELECT event, plies FROM games ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let rejects = conn
        .prepare("SELECT reason FROM rejects ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (run, games, rejects)
}

/// Issue 23: two master games (Parker–Miles, 4NCL 2001; masters-4's `… Bf2  0-1`) end with
/// two NUL bytes after their result and were rejected as ``unknown token `\0\0` ``. Bytes
/// after a game's result are not part of its moves: the game is indexed with the moves before
/// its result, the next game is read as usual, and the file gets one warning.
#[test]
fn nul_bytes_after_the_result_do_not_lose_the_game() {
    let first = b"[Event \"nul\"]\r\n[Result \"1/2-1/2\"]\r\n\r\n1.e4 e5 2.Nf3 Nc6 3.Bb5 a6  1/2-1/2\0\0\r\n\r\n";
    let second = b"[Event \"next\"]\r\n[Result \"*\"]\r\n\r\n1.d4 d5 2.c4 *\r\n\r\n";
    let (run, games, rejects) = index_bytes(&[&first[..], &second[..]].concat());
    run.expect_code(0, "a game with NUL bytes after its result");
    assert_eq!(
        games,
        vec![("nul".to_string(), 6), ("next".to_string(), 3)],
        "both games, with their plies; rejects {rejects:?}\n{}",
        run.stderr
    );
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("pawndex: warning:"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "one warning for the file:\n{}",
        run.stderr
    );
    assert!(
        warnings[0].contains("after the result") && warnings[0].contains("byte 72"),
        "the warning says what and where:\n{}",
        run.stderr
    );
}

/// What follows a game's result is never glued onto its moves and never costs the next
/// game; control characters between or against moves separate them like spaces, so the game is
/// indexed; a control character inside a move (no move is left) still rejects it.
#[test]
fn only_text_that_hides_moves_rejects_a_game() {
    let next = "[Event \"next\"]\n\n1. d4 d5 2. c4 *\n\n";
    // (movetext of the game "x", its plies or the reject reason, whether the file warns)
    let cases: [(&str, Result<i64, &str>, bool); 12] = [
        ("1. e4 e5 2. Nf3 Nc6 1-0\0\0\n", Ok(4), true),
        ("1. e4 e5 1-0 2. Nf3 Nc6\n\n", Ok(2), true),
        ("1. e4 e5 0-1 $$$ foo\n\n", Ok(2), true),
        ("1. e4 e5 * *\n\n", Ok(2), true),
        (
            "1. e4 e5 1-0 {a comment after the result}\n\n",
            Ok(2),
            false,
        ),
        (
            "1. e4 \0 e5 2. Nf3 \x1a\x1a Nc6 3. \x0c Bb5 *\n\n",
            Ok(5),
            false,
        ),
        ("1. e4 e5\0\n2. Nf3\0\0 *\n\n", Ok(3), false),
        ("1.e4\x0ce5 2.Nf3 *\n\n", Ok(3), false),
        (
            "1. e4 e\x005 *\n\n",
            Err("unknown token `e\\x005` at ply 2"),
            false,
        ),
        ("1. e4 \0e5 *\n\n", Ok(2), false),
        (
            "1. e4 $$$ e5 *\n\n",
            Err("unknown token `$$$` at ply 2"),
            false,
        ),
        (
            "1. e4 foo e5 *\n\n",
            Err("unknown token `foo` at ply 2"),
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (movetext, want, warns) in cases {
        let pgn = format!("[Event \"x\"]\n\n{movetext}{next}");
        let (run, games, rejects) = index_bytes(pgn.as_bytes());
        let warned = run.stderr.contains("pawndex: warning:");
        let ok = run.code == Some(0)
            && warned == warns
            && match want {
                Ok(plies) => {
                    games == vec![("x".to_string(), plies), ("next".to_string(), 3)]
                        && rejects.is_empty()
                }
                Err(reason) => {
                    games == vec![("next".to_string(), 3)]
                        && rejects.len() == 1
                        && rejects[0].contains(reason)
                }
            };
        if !ok {
            failures.push(format!(
                "{movetext:?}: want {want:?} (warning: {warns})\ngames {games:?}, rejects {rejects:?}\n{}",
                run.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `pawndex index` with `env` set; the run and the copies it did not replay (from
/// `PAWNDEX_TIMINGS`).
fn index_with_env(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> (Run, u64) {
    let mut cmd = std::process::Command::new(BIN);
    cmd.arg("index").args(args).env("PAWNDEX_TIMINGS", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = Run::of(cmd, "index");
    run.expect_code(0, "index");
    let copies = run
        .stderr
        .lines()
        .find_map(|l| l.split("copies not replayed: ").nth(1))
        .unwrap_or_else(|| panic!("no copies count:\n{}", run.stderr))
        .trim()
        .parse()
        .unwrap();
    (run, copies)
}

/// A game of `event` with `moves` (and a blank line after it).
fn game(event: &str, moves: &str) -> String {
    format!("[Event \"{event}\"]\n[White \"W\"]\n[Black \"B\"]\n[Result \"*\"]\n\n{moves}\n\n")
}

#[test]
fn copies_of_replayed_games_are_duplicates_without_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    let a = game("copies: A", "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *");
    let illegal = game("copies: illegal", "1. e4 e5 2. Ke3 Nc6 *");
    let stray = game("copies: stray", "1. d4 d5 * 2. c4");
    let filler: String = (0..600)
        .map(|i| game(&format!("copies: filler {i}"), "1. c4 e5 2. Nc3 Nf6 *"))
        .collect();
    // A copy right after its original is in the same batch of 512: replayed, and the writer
    // finds it. The copies after the filler are in later batches (and in another file).
    let first = [&a, &a, &illegal, &stray, &filler, &a, &illegal, &stray].map(String::as_str);
    let second = [&a, &illegal, &stray, &a].map(String::as_str);
    let files = [("one.pgn", first.concat()), ("two.pgn", second.concat())].map(|(name, text)| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    });
    let mut runs = Vec::new();
    for (name, env) in [
        ("copies.db", &[][..]),
        ("replayed.db", &[("PAWNDEX_NO_COPIES", "1")][..]),
    ] {
        let db = dir.path().join(name);
        let args = [db.as_os_str(), files[0].as_os_str(), files[1].as_os_str()];
        let (run, copies) = index_with_env(&[&["--db".as_ref()][..], &args].concat(), env);
        let s = run.summary();
        // 600 filler + A + illegal + stray; A 5 times, stray 3 times, illegal 3 times.
        assert_eq!(
            (s.read, s.indexed, s.duplicates, s.rejected),
            (611, 602, 6, 3),
            "{}",
            run.stderr
        );
        let warnings: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("pawndex: warning"))
            .collect();
        assert_eq!(warnings.len(), 2, "{}", run.stderr);
        assert!(warnings[0].contains("of 2 game(s)"), "{}", run.stderr);
        assert!(warnings[1].contains("of 1 game(s)"), "{}", run.stderr);
        runs.push((copies, snapshot(&db)));
    }
    // A's copies after the filler (one per file), and the second file's second A.
    assert_eq!(runs[0].0, 3, "copies not replayed");
    assert_eq!(runs[1].0, 0, "PAWNDEX_NO_COPIES replays every game");
    assert_eq!(runs[0].1, runs[1].1, "the same database either way");
    let rejects = &runs[0].1.1;
    assert_eq!(
        rejects.len(),
        3,
        "each copy of the illegal game is rejected: {rejects:?}"
    );

    // `--keep-duplicates` replays and stores every copy.
    let db = dir.path().join("keep.db");
    let args = [db.as_os_str(), files[0].as_os_str(), files[1].as_os_str()];
    let (run, copies) = index_with_env(
        &[&["--keep-duplicates".as_ref(), "--db".as_ref()][..], &args].concat(),
        &[],
    );
    assert_eq!(copies, 0);
    assert_eq!(run.summary().indexed, 608, "{}", run.stderr);

    // The Parquet dataset counts the same.
    let out = dir.path().join("dataset");
    let args = [out.as_os_str(), files[0].as_os_str(), files[1].as_os_str()];
    let (run, copies) = index_with_env(&[&["--parquet".as_ref()][..], &args].concat(), &[]);
    let s = run.summary();
    assert_eq!(
        (s.indexed, s.duplicates, s.rejected, copies),
        (602, 6, 3, 3),
        "{}",
        run.stderr
    );
}
