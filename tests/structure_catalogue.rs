//! What a structure catalogue folder (`PAWNDEX_STRUCTURES`) may hold: a definition with two
//! meanings (a `count` naming a file twice), a definition no pawns can ever meet and a file or
//! folder above the size caps are refused with a message naming the file and the reason, before
//! any database is created or changed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{BIN, Run, root_path};

const HEAD: &str = "family = \"test\"\ndescription = \"d\"\nsource = \"s\"\n";

/// A definition any position with a White d-pawn meets.
const GOOD: (&str, &str) = ("d-pawn", "[white]\none_of = [[\"d2\", \"d3\", \"d4\"]]\n");

/// Writes a catalogue folder of (key, body) definitions.
fn catalogue(dir: &Path, name: &str, defs: &[(&str, &str)]) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    for (key, body) in defs {
        std::fs::write(
            folder.join(format!("{key}.toml")),
            format!("name = \"{key}\"\n{HEAD}{body}"),
        )
        .unwrap();
    }
    folder
}

/// `pawndex ARGS --db DB` (and the example games for `index`) with the catalogue `cat`.
fn pawndex(cat: &Path, args: &[&str], db: &Path) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.env("PAWNDEX_STRUCTURES", cat)
        .args(args)
        .arg("--db")
        .arg(db);
    if args.first() == Some(&"index") {
        cmd.arg("-q").arg(root_path("examples/sample.pgn"));
    }
    Run::of(cmd, &format!("pawndex {args:?}"))
}

/// Index with `cat` is refused (exit 1) with every `wanted` text on stderr, and no database is
/// created.
fn refused(dir: &Path, cat: &Path, wanted: &[&str]) {
    let db = dir.join("refused.db");
    let run = pawndex(cat, &["index"], &db);
    run.expect_code(1, &format!("index with the catalogue {}", cat.display()));
    for w in wanted {
        assert!(
            run.stderr.contains(w),
            "{}: no {w:?} in the message:\n{}",
            cat.display(),
            run.stderr
        );
    }
    assert_eq!(
        run.stderr.trim_end().lines().count(),
        1,
        "one line:\n{}",
        run.stderr
    );
    assert!(!db.exists(), "{}: a database was created", cat.display());
}

/// `files = "dd"` counted the d-file once in the classifier and twice in `pawndex check`'s
/// second reading, so check reported every run of a healthy database. A file named twice is
/// refused; written once, index and check agree.
#[test]
fn a_count_naming_a_file_twice_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let twice = catalogue(
        dir.path(),
        "twice",
        &[
            GOOD,
            (
                "one-d",
                "[white]\ncount = [{ files = \"dd\", min = 1, max = 1 }]\n",
            ),
        ],
    );
    refused(
        dir.path(),
        &twice,
        &["one-d.toml", "[white]", "`count`", "\"dd\"", "twice"],
    );

    let once = catalogue(
        dir.path(),
        "once",
        &[
            GOOD,
            (
                "one-d",
                "[white]\ncount = [{ files = \"d\", min = 1, max = 1 }]\n",
            ),
        ],
    );
    let db = dir.path().join("once.db");
    pawndex(&once, &["index"], &db).expect_code(0, "index");
    let run = pawndex(&once, &["check"], &db);
    run.expect_code(0, "check");
}

/// Definitions that no pair of pawn sets can meet: each is refused with its reason, as a square
/// both in `pawns` and in `none` already was.
#[test]
fn definitions_that_can_never_match_are_refused_with_the_reason() {
    let cases: &[(&str, &[&str])] = &[
        // Nine pawns required.
        (
            "[white]\npawns = [\"a2\", \"b2\", \"c2\", \"d2\", \"e2\", \"f2\", \"g2\", \"h2\", \"a3\"]\n",
            &["[white]", "at least 9 pawns", "at most 8"],
        ),
        // Required squares and count minimums together.
        (
            "[black]\npawns = [\"a7\", \"b7\", \"c7\", \"d7\", \"e7\", \"f7\"]\n\
             count = [{ files = \"gh\", min = 3 }]\n",
            &["[black]", "at least 9 pawns", "at most 8"],
        ),
        (
            "[white]\ncount = [{ files = \"abc\", min = 5 }, { files = \"fgh\", min = 4 }]\n",
            &["[white]", "at least 9 pawns"],
        ),
        // A required square on a file whose count is capped at 0.
        (
            "[white]\npawns = [\"d4\"]\ncount = [{ files = \"d\", max = 0 }]\n",
            &["[white]", "\"d\"", "at most 0", "`pawns`"],
        ),
        (
            "[white]\npawns = [\"d4\", \"e4\", \"c3\"]\ncount = [{ files = \"cde\", max = 2 }]\n",
            &["[white]", "\"cde\"", "at most 2", "3"],
        ),
        // A one_of list whose squares all lie on a file capped at 0.
        (
            "[black]\none_of = [[\"c6\", \"c5\"]]\ncount = [{ files = \"c\", max = 0 }]\n",
            &["[black]", "\"c\"", "at most 0", "`one_of`"],
        ),
        // A minimum above what the files hold (ranks 2 to 7).
        (
            "[white]\ncount = [{ files = \"d\", min = 7 }]\n",
            &["[white]", "\"d\"", "at least 7", "6"],
        ),
        (
            "[white]\nnone = [\"d4\", \"d5\", \"d6\"]\ncount = [{ files = \"d\", min = 4 }]\n",
            &["[white]", "\"d\"", "at least 4", "3", "`none`"],
        ),
        // The same square required for both sides.
        (
            "[white]\npawns = [\"d4\"]\n[black]\npawns = [\"d4\"]\n",
            &["d4", "both"],
        ),
        // A one_of list whose squares are forbidden or taken by the other side.
        (
            "[white]\nnone = [\"d3\"]\none_of = [[\"d3\", \"d4\"]]\n[black]\npawns = [\"d4\"]\n",
            &["[white]", "`one_of`", "never"],
        ),
        // Counts that cannot hold together: a and c need 5 each once b is empty.
        (
            "[white]\ncount = [{ files = \"ab\", min = 5 }, { files = \"bc\", min = 5 }, \
             { files = \"b\", max = 0 }]\n",
            &["[white]", "`count`", "cannot all hold"],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (body, wanted)) in cases.iter().enumerate() {
        let cat = catalogue(dir.path(), &format!("c{i}"), &[GOOD, ("never", body)]);
        let mut wanted = wanted.to_vec();
        wanted.push("never.toml");
        refused(dir.path(), &cat, &wanted);
    }
}

/// The cap on one definition file (64 KiB): a file one byte above it is refused before any
/// database is created or changed; one at the cap is read.
#[test]
fn a_catalogue_file_above_the_size_cap_is_refused_before_anything_is_written() {
    const CAP: usize = 64 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let padded = |size: usize| {
        let body = format!("name = \"big\"\n{HEAD}[white]\npawns = [\"d4\"]\n# ");
        let mut text = body.clone();
        text.push_str(&"x".repeat(size - body.len() - 1));
        text.push('\n');
        assert_eq!(text.len(), size);
        text
    };
    let at_cap = dir.path().join("at-cap");
    std::fs::create_dir(&at_cap).unwrap();
    std::fs::write(at_cap.join("big.toml"), padded(CAP)).unwrap();
    let db = dir.path().join("p.db");
    pawndex(&at_cap, &["index"], &db).expect_code(0, "index with a file at the cap");
    let before = std::fs::read(&db).unwrap();

    let above = dir.path().join("above");
    std::fs::create_dir(&above).unwrap();
    std::fs::write(above.join("big.toml"), padded(CAP + 1)).unwrap();
    refused(dir.path(), &above, &["big.toml", "65537 bytes", "65536"]);
    // An existing database is left as it was (index, migrate, check all stop first).
    for args in [&["index"][..], &["migrate"], &["check"]] {
        let run = pawndex(&above, args, &db);
        run.expect_code(1, &format!("{args:?} with a file above the cap"));
        assert!(run.stderr.contains("65537 bytes"), "{}", run.stderr);
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{args:?} changed the db"
        );
    }
}

/// A catalogue of `n` distinct definitions (two White squares and a Black one; every other
/// one with its reversed form), written into `dir/name`.
fn generated_catalogue(dir: &Path, name: &str, n: usize) -> PathBuf {
    let squares: Vec<String> = (b'a'..=b'h')
        .flat_map(|f| (2..=7).map(move |r| format!("{}{r}", char::from(f))))
        .collect();
    let mut defs = Vec::new();
    'all: for (i, a) in squares.iter().enumerate() {
        for b in &squares[i + 1..] {
            for c in &squares {
                if c == a || c == b {
                    continue;
                }
                if defs.len() == n {
                    break 'all;
                }
                let k = defs.len();
                defs.push((
                    format!("g{k:05}"),
                    format!(
                        "reversed = {}\n[white]\npawns = [\"{a}\", \"{b}\"]\n[black]\npawns = [\"{c}\"]\n",
                        k % 2 == 1
                    ),
                ));
            }
        }
    }
    let defs: Vec<(&str, &str)> = defs.iter().map(|(k, t)| (k.as_str(), t.as_str())).collect();
    catalogue(dir, name, &defs)
}

/// `pawndex check` remembered, for every pawn set, one byte per form of the catalogue: its
/// memory grew with pawn sets times definitions (3.0 GB on 20,000 games with 10,000
/// definitions). Here 3,000 definitions (4,500 forms) and some 30,000 pawn sets took over
/// 100 MB of address space before (the check ran out of memory under a 100 MB limit); the check
/// now keeps one bit per form and at most 16 MiB per side, and passes under that limit (and
/// under 60 MB). What
/// this proves: check's memory on this case is under 100 MB; the bound itself is tested in
/// `engine::check::structures::tests::the_side_cache_stays_within_its_budget`.
#[cfg(target_os = "linux")]
#[test]
fn check_memory_does_not_grow_with_pawn_sets_times_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let cat = generated_catalogue(dir.path(), "generated", 3000);
    let games = dir.path().join("random.pgn");
    std::fs::write(&games, common::query::random_games_pgn(0x5eed_c4ec, 700)).unwrap();
    let db = dir.path().join("p.db");
    let mut cmd = Command::new(BIN);
    cmd.env("PAWNDEX_STRUCTURES", &cat)
        .args(["index", "-q", "--db"])
        .arg(&db)
        .arg(&games);
    Run::of(cmd, "index").expect_code(0, "index");
    let sets = common::count(&common::open_db(&db), "SELECT count(*) FROM pawn_sets");
    assert!(sets > 25_000, "only {sets} pawn sets");
    // `ulimit -v` counts KiB of address space.
    let mut cmd = Command::new("sh");
    cmd.env("PAWNDEX_STRUCTURES", &cat)
        .arg("-c")
        .arg("ulimit -v 100000 && exec \"$0\" check --db \"$1\"")
        .arg(BIN)
        .arg(&db);
    let run = Run::of(cmd, "check under a 100 MB limit");
    run.expect_code(0, "check under a 100 MB limit");
    assert!(run.stdout.contains("ok: "), "{}", run.stdout);
}
