//! Mistakes with paths create nothing: `pawndex index research.db` (`--db` forgotten) is refused
//! naming the slip, `--db DIRECTORY` says it is a directory for every command, a missing input
//! or database is an error. After each failing command the directory listing is unchanged.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// `pawndex ARGS` run in `dir`.
fn pawndex_in(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    Run::of(cmd, &format!("{args:?}"))
}

/// Every name under `dir`, recursively, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            names.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    names.sort();
    names
}

/// A directory with `sample.pgn`, a database `research.db` and an empty directory `dir`.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root_path("examples/sample.pgn"),
        dir.path().join("sample.pgn"),
    )
    .unwrap();
    pawndex_in(
        dir.path(),
        &["index", "-q", "--db", "research.db", "sample.pgn"],
    )
    .expect_code(0, "making research.db");
    std::fs::create_dir(dir.path().join("dir")).unwrap();
    dir
}

/// Runs `args` in a fresh set-up; expects exit 1, an error line containing `wanted`, and the
/// listing unchanged.
fn refused(args: &[&str], wanted: &str) {
    let dir = setup();
    let before = listing(dir.path());
    let run = pawndex_in(dir.path(), args);
    run.expect_code(1, &format!("{args:?}"));
    let line = format!("pawndex: error: {wanted}");
    assert!(
        run.stderr.lines().any(|l| l == line),
        "{args:?}: wanted the line\n{line}\ngot:\n{}",
        run.stderr
    );
    assert_eq!(
        listing(dir.path()),
        before,
        "{args:?} changed the directory"
    );
}

#[test]
fn a_database_given_as_input_is_refused_with_a_hint() {
    refused(
        &["index", "research.db"],
        "research.db is a SQLite database, not PGN: did you mean --db research.db?",
    );
    refused(
        &["index", "--db", "new.db", "sample.pgn", "research.db"],
        "research.db is a SQLite database, not PGN: did you mean --db research.db?",
    );
}

#[test]
fn missing_or_unreadable_inputs_create_no_database() {
    refused(
        &["index", "--db", "new.db", "sample.pgn", "nothere.pgn"],
        "nothere.pgn: cannot read: No such file or directory (os error 2)",
    );
    refused(
        &["index", "--db", "new.db", "dir"],
        "dir is a directory, not a PGN file",
    );
}

#[test]
fn a_directory_as_database_is_said_as_such_by_every_command() {
    let is_dir = "dir is a directory, not a database file";
    refused(&["index", "--db", "dir", "sample.pgn"], is_dir);
    refused(
        &["query", "--db", "dir", "white-isolated-queen-pawn"],
        is_dir,
    );
    refused(&["find", "--db", "dir", "--white", "islands>=3"], is_dir);
    refused(&["stats", "--db", "dir", "--by", "ply"], is_dir);
    refused(&["check", "--db", "dir"], is_dir);
    refused(&["migrate", "--db", "dir"], is_dir);
    refused(&["info", "--db", "dir"], is_dir);
}

#[test]
fn read_commands_on_a_missing_database_create_nothing() {
    let missing = "database nothere.db does not exist; create it with `pawndex index --db \
                   nothere.db GAMES.pgn`";
    refused(
        &["query", "--db", "nothere.db", "white-isolated-queen-pawn"],
        missing,
    );
    refused(
        &["find", "--db", "nothere.db", "--white", "islands>=3"],
        missing,
    );
    refused(&["stats", "--db", "nothere.db", "--by", "ply"], missing);
    refused(&["check", "--db", "nothere.db"], missing);
    refused(&["info", "--db", "nothere.db"], missing);
    refused(
        &["migrate", "--db", "nothere.db"],
        "database nothere.db does not exist",
    );
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_left_alone() {
    for cmd in [
        &["info"][..],
        &["check"],
        &["query", "white-isolated-queen-pawn"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--db", "sample.pgn"]);
        // The file is PGN: said so, with what to run (issue 24).
        refused(
            &args,
            "sample.pgn is PGN, not a pawndex database: index it first, as in `pawndex index --db sample.db sample.pgn`, then give --db sample.db",
        );
    }
    refused(
        &["index", "--db", "sample.pgn", "sample.pgn"],
        "sample.pgn is PGN, not a pawndex database: --db names the database to write, as in \
         `pawndex index --db sample.db sample.pgn`; it was left untouched",
    );
}

/// `pawndex ARGS` run in `dir` with `input` on its standard input.
fn pawndex_in_with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    run_with_stdin(cmd, input)
}

/// Issue 23: `pawndex index --db zz.db s.zip` refused the zip with a good message but left a
/// 160 KiB zz.db. Every check that can refuse an input (archives, binary data, a compressed
/// stream broken from its first byte) now runs before anything is created, like the checks of
/// missing files and directories: a new database is not created, an existing one is left
/// byte-identical, standard input included.
#[test]
fn a_refused_input_creates_no_database_and_leaves_an_existing_one_untouched() {
    let pgn = b"[Event \"x\"]\n\n1. e4 e5 *\n\n";
    let gzip = |bytes: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, bytes).unwrap();
        gz.finish().unwrap()
    };
    let zip = [&b"PK\x03\x04\x14\x00\x00\x00\x08\x00"[..], pgn].concat();
    let mut tar = vec![0u8; 1024];
    tar[..9].copy_from_slice(b"games.pgn");
    tar[257..263].copy_from_slice(b"ustar\0");
    let noise = Rng::new(0x5EED_2312).bytes(1 << 14);
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(pgn.iter().flat_map(|&b| [b, 0]))
        .collect();
    let broken_gz = [&[0x1f, 0x8b, 0x08, 0x00][..], &noise[..4096]].concat();
    let inputs: [(&str, Vec<u8>, &str); 5] = [
        (
            "s.zip",
            zip.clone(),
            "s.zip: zip archives are not supported: unpack it first (unzip s.zip) and index the .pgn inside",
        ),
        (
            "games.tar.gz",
            gzip(&tar),
            "games.tar.gz: tar archives are not supported: unpack it first (tar -xf games.tar.gz)",
        ),
        (
            "noise.bin",
            noise.clone(),
            "noise.bin: not a PGN file (binary data at the start)",
        ),
        (
            "utf16.pgn",
            utf16,
            "utf16.pgn: not a PGN file (binary data at the start)",
        ),
        ("broken.pgn.gz", broken_gz, "broken.pgn.gz: cannot read: "),
    ];
    let mut failures = Vec::new();
    let check = |what: String, dir: &Path, run: &Run, wanted: &str, before: &[String]| {
        let line = format!("pawndex: error: {wanted}");
        let mut problems = Vec::new();
        if run.code != Some(1) {
            problems.push(format!("exit {:?}, expected 1", run.code));
        }
        if !run.stderr.lines().any(|l| l.starts_with(&line)) {
            problems.push(format!("no line starting {line:?}"));
        }
        if listing(dir) != before {
            problems.push(format!("files changed: {:?}", listing(dir)));
        }
        (!problems.is_empty()).then(|| format!("{what}: {}\n{}", problems.join("; "), run.stderr))
    };
    for (name, bytes, wanted) in &inputs {
        let dir = setup();
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let before = listing(dir.path());
        let run = pawndex_in(dir.path(), &["index", "--db", "new.db", "sample.pgn", name]);
        failures.extend(check(
            format!("{name} into a new database"),
            dir.path(),
            &run,
            wanted,
            &before,
        ));
        let db = std::fs::read(dir.path().join("research.db")).unwrap();
        let run = pawndex_in(
            dir.path(),
            &["index", "--db", "research.db", "sample.pgn", name],
        );
        failures.extend(check(
            format!("{name} into research.db"),
            dir.path(),
            &run,
            wanted,
            &before,
        ));
        if std::fs::read(dir.path().join("research.db")).unwrap() != db {
            failures.push(format!("{name}: research.db changed"));
        }
    }
    for (db, bytes, wanted) in [
        (
            "new.db",
            zip,
            "standard input: zip archives are not supported",
        ),
        (
            "research.db",
            noise,
            "standard input: not a PGN file (binary data at the start)",
        ),
    ] {
        let dir = setup();
        let before = listing(dir.path());
        let old = std::fs::read(dir.path().join("research.db")).unwrap();
        let run = pawndex_in_with_stdin(dir.path(), &["index", "--db", db, "-"], &bytes);
        failures.extend(check(
            format!("{wanted} on stdin into {db}"),
            dir.path(),
            &run,
            wanted,
            &before,
        ));
        if std::fs::read(dir.path().join("research.db")).unwrap() != old {
            failures.push(format!("stdin into {db}: research.db changed"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Zeroes the root page of `table` in `db`: SQLite then finds the file damaged when a read
/// reaches that table.
fn zero_root_page(db: &Path, table: &str) {
    let conn = open_db(db);
    let root = count(
        &conn,
        &format!("SELECT rootpage FROM sqlite_schema WHERE name = '{table}'"),
    );
    let page_size = count(&conn, "PRAGMA page_size");
    drop(conn);
    let mut bytes = std::fs::read(db).unwrap();
    let start = usize::try_from((root - 1) * page_size).unwrap();
    bytes[start..start + usize::try_from(page_size).unwrap()].fill(0);
    std::fs::write(db, bytes).unwrap();
}

/// A damaged database is said to be one: exit 1, its real path, what to run, and (a read
/// command writes nothing) no word of a rollback nor a literal `PATH`.
fn expect_damaged(run: &Run, db: &str, what: &str) {
    run.expect_code(1, what);
    let err = &run.stderr;
    assert!(
        err.contains(&format!("the database {db} is damaged"))
            && err.contains(&format!("`pawndex check --db {db}` lists what is wrong")),
        "{what}: {err}"
    );
    assert!(
        !err.contains("rolled back") && !err.contains("PATH"),
        "{what}: {err}"
    );
}

#[test]
fn similar_on_a_damaged_runs_page_says_the_database_is_damaged_not_the_ply() {
    let dir = setup();
    let plies = count(
        &open_db(&dir.path().join("research.db")),
        "SELECT plies FROM games WHERE id = 2",
    );
    assert!(plies >= 10, "game 2 has {plies} plies");
    // Within the game's plies but no run holds it: what a damaged page SQLite does not
    // notice gives (the runs of game 2 gone).
    open_db(&dir.path().join("research.db"))
        .execute("DELETE FROM runs WHERE game_id = 2", [])
        .unwrap();
    let args = [
        "similar",
        "--db",
        "research.db",
        "--game",
        "2",
        "--ply",
        "10",
    ];
    let run = pawndex_in(dir.path(), &args);
    expect_damaged(
        &run,
        "research.db",
        "similar --game 2 --ply 10 without runs",
    );
    assert!(
        run.stderr.contains("no run of game 2 holds ply 10"),
        "{}",
        run.stderr
    );
    // A ply past the game's end is a missing thing (exit 1), as a missing game is (issue 37:
    // not a malformed command line).
    let late = (plies + 1).to_string();
    let run = pawndex_in(
        dir.path(),
        &[
            "similar",
            "--db",
            "research.db",
            "--game",
            "2",
            "--ply",
            &late,
        ],
    );
    run.expect_code(1, "a ply past the end");
    assert!(
        run.stderr
            .contains(&format!("game 2 has plies 0 to {plies}")),
        "{}",
        run.stderr
    );

    let run = pawndex_in(
        dir.path(),
        &[
            "similar",
            "--db",
            "research.db",
            "--game",
            "99999999",
            "--ply",
            "8",
        ],
    );
    run.expect_code(1, "a game the database does not hold");
    assert!(
        run.stderr
            .contains("--game 99999999: research.db has no game with this id"),
        "{}",
        run.stderr
    );

    // A page of runs SQLite finds damaged.
    let dir = setup();
    zero_root_page(&dir.path().join("research.db"), "runs");
    let run = pawndex_in(dir.path(), &args);
    expect_damaged(
        &run,
        "research.db",
        "similar --game 2 --ply 10 on a zeroed page",
    );
}

#[test]
fn read_commands_on_a_damaged_database_name_it_and_claim_no_rollback() {
    let dir = setup();
    zero_root_page(&dir.path().join("research.db"), "runs");
    for args in [
        &["query", "--db", "research.db", "white-isolated-queen-pawn"][..],
        &["stats", "--db", "research.db", "--by", "ply"],
        &[
            "similar",
            "--db",
            "research.db",
            "--structure",
            "8/pppppppp/8/8/8/8/PPPPPPPP/8",
        ],
    ] {
        let run = pawndex_in(dir.path(), args);
        expect_damaged(&run, "research.db", &format!("{args:?}"));
    }
}
