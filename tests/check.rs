//! `pawndex check` on real databases: a freshly indexed one passes and is left byte-identical;
//! each kind of damage, made with rusqlite on a copy, exits 1 and names the table and ids.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use rusqlite::Connection;

const BIN: &str = env!("CARGO_BIN_EXE_pawndex");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const FILES: [&str; 2] = ["examples/sample.pgn", "tests/fixtures/structures.pgn"];

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn pawndex(args: &[&str]) -> Run {
    let out = Command::new(BIN).args(args).output().expect("run pawndex");
    let run = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "pawndex {args:?} panicked:\n{}",
        run.stderr
    );
    run
}

fn index(db: &Path, files: &[&str]) {
    let db = db.to_str().unwrap();
    let paths: Vec<String> = files.iter().map(|f| format!("{ROOT}/{f}")).collect();
    let mut args = vec!["index", "-q", "--db", db];
    args.extend(paths.iter().map(String::as_str));
    let run = pawndex(&args);
    assert_eq!(run.code, Some(0), "index failed:\n{}", run.stderr);
}

fn check(db: &Path) -> Run {
    pawndex(&["check", "--db", db.to_str().unwrap()])
}

/// The bytes of a finished database of both files, indexed once per test process.
fn base() -> &'static [u8] {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("base.db");
        index(&db, &FILES);
        std::fs::read(&db).unwrap()
    })
}

/// A fresh copy of the base database in `dir`.
fn fresh(dir: &Path) -> PathBuf {
    let db = dir.join("pawndex.db");
    std::fs::write(&db, base()).unwrap();
    db
}

/// Checks a copy of the base database damaged by `sql`; expects exit 1 and every `wanted`
/// text in one line of the output.
fn damaged(sql: &str, wanted: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    Connection::open(&db).unwrap().execute_batch(sql).unwrap();
    let run = check(&db);
    expect_problems(&run, wanted);
    run
}

fn expect_problems(run: &Run, wanted: &[&str]) {
    assert_eq!(
        run.code,
        Some(1),
        "expected exit 1\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout
            .lines()
            .any(|l| wanted.iter().all(|w| l.contains(w))),
        "no line of the output has all of {wanted:?}:\n{}",
        run.stdout
    );
    let last = run.stdout.lines().last().unwrap_or("");
    assert!(last.ends_with("problem(s) found"), "last line: {last}");
}

fn one(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_fresh_database_passes_and_is_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let files = listing(dir.path());
    let run = check(&db);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(run.stdout.starts_with("ok: 21 games, "), "{}", run.stdout);
    assert_eq!(std::fs::read(&db).unwrap(), base(), "the file was modified");
    assert_eq!(listing(dir.path()), files, "a file was created beside it");
}

#[test]
fn a_run_ending_before_it_starts_is_found() {
    let first: i64 = {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(fresh(dir.path())).unwrap();
        one(
            &conn,
            "SELECT min(first_ply) FROM runs WHERE game_id = 3 AND first_ply > 0",
        )
    };
    let sql = format!(
        "UPDATE runs SET last_ply = first_ply - 1 WHERE game_id = 3 AND first_ply = {first}"
    );
    let run = damaged(
        &sql,
        &[&format!(
            "runs: game 3 run at ply {first}: last_ply {} < first_ply {first}",
            first - 1
        )],
    );
    // The plies the run held (one or more) are now in no run, and the totals no longer add up.
    expect_problems(&run, &["runs: game 3: pl", " in no run"]);
    expect_problems(&run, &["set_totals: set", "positions is"]);
}

#[test]
fn a_run_naming_a_missing_pawn_set_is_found() {
    damaged(
        "UPDATE runs SET white_set = 999999999 WHERE game_id = 2 AND first_ply = 0",
        &["runs: game 2 run at ply 0: white_set 999999999 is not in pawn_sets"],
    );
}

#[test]
fn a_run_naming_the_other_sides_pawn_set_is_found() {
    damaged(
        "UPDATE runs SET black_set = white_set WHERE game_id = 4 AND first_ply = 0",
        &[
            "runs: game 4 run at ply 0: black_set",
            "is a White pawn set",
        ],
    );
}

#[test]
fn a_wrong_set_total_is_found() {
    let run = damaged(
        "UPDATE set_totals SET positions = positions + 1
         WHERE set_id = (SELECT min(set_id) FROM set_totals)",
        &["set_totals: set 1: positions is"],
    );
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
}

#[test]
fn a_flipped_byte_in_a_game_list_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let conn = Connection::open(&db).unwrap();
    // The longest list (the start position's sets), one byte in its middle.
    let (set, mut blob): (i64, Vec<u8>) = conn
        .query_row(
            "SELECT set_id, games FROM set_games ORDER BY length(games) DESC, set_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(blob.len() >= 4);
    let middle = blob.len() / 2;
    blob[middle] ^= 0x01;
    conn.execute(
        "UPDATE set_games SET games = ?1 WHERE set_id = ?2",
        rusqlite::params![blob, set],
    )
    .unwrap();
    drop(conn);
    let run = check(&db);
    expect_problems(&run, &[&format!("set_games: set {set}: "), "the runs give"]);
}

/// A byte of game 2's moves flipped in place (the byte 16146 of the sample database:
/// 0xbd -> 0xbc, move 32 becomes illegal): SQLite's checks and the runs cannot see it, the
/// games' hash does, and the replay names the move.
#[test]
fn a_flipped_byte_in_a_games_moves_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh(dir.path());
    let conn = Connection::open(&db).unwrap();
    let mut moves: Vec<u8> = conn
        .query_row("SELECT moves FROM games WHERE id = 2", [], |r| r.get(0))
        .unwrap();
    moves[62] ^= 0x01;
    conn.execute("UPDATE games SET moves = ?1 WHERE id = 2", [&moves])
        .unwrap();
    drop(conn);
    let run = check(&db);
    expect_problems(
        &run,
        &[
            "games: game 2: stored move 32",
            "is not legal",
            "games.hash",
        ],
    );
}

/// Moves that still replay (game 3's moves given to game 4) and a changed Black tag: each is
/// found, naming its game.
#[test]
fn changed_moves_or_tags_of_a_game_are_found() {
    damaged(
        "UPDATE games SET moves = (SELECT moves FROM games WHERE id = 3),
                          plies = (SELECT plies FROM games WHERE id = 3) WHERE id = 4",
        &["games: game 4: ", "games.hash does not match"],
    );
    let run = damaged(
        "UPDATE games SET black = 'Somebody Else' WHERE id = 5",
        &["games: game 5: its tags", "games.hash does not match"],
    );
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    damaged(
        "UPDATE games SET date = '1999.??.??' WHERE id = 1",
        &["games: game 1: its tags"],
    );
}

#[test]
fn an_unterminated_game_list_is_found() {
    damaged(
        "UPDATE set_games SET games = CAST(games || X'80' AS BLOB) WHERE set_id = 2",
        &["set_games: set 2: the list is damaged"],
    );
}

#[test]
fn a_wrong_last_game_is_found() {
    damaged(
        "UPDATE set_games SET last_game = last_game + 1 WHERE set_id = 3",
        &["set_games: set 3: last_game is"],
    );
}

#[test]
fn a_pawn_set_with_wrong_islands_is_found() {
    damaged(
        "UPDATE pawn_sets SET islands = islands + 1 WHERE id = 5",
        &["pawn_sets: set 5 (pawns ", "islands is"],
    );
}

#[test]
fn impossible_pawns_are_found() {
    damaged(
        "UPDATE pawn_sets SET pawns = pawns | 1 WHERE id = 6",
        &["pawn_sets: set 6: ", "rank 1 or 8"],
    );
}

#[test]
fn a_run_of_a_game_id_beyond_32_bits_is_found() {
    damaged(
        "INSERT INTO runs
         SELECT 1099511627776, 0, 0, white_set, black_set, 0, 0, 0
         FROM runs WHERE game_id = 1 AND first_ply = 0",
        &["runs: game 1099511627776", "no such game"],
    );
}

#[test]
fn a_game_id_beyond_32_bits_is_found() {
    damaged(
        "UPDATE games SET id = 1099511627776 WHERE id = 21;
         UPDATE game_summary SET game_id = 1099511627776 WHERE game_id = 21;
         UPDATE runs SET game_id = 1099511627776 WHERE game_id = 21;",
        &["games: game 1099511627776: id out of range"],
    );
}

#[test]
fn many_problems_print_five_examples_and_a_count() {
    let run = damaged(
        "UPDATE pawn_sets SET islands = islands + 1",
        &[
            "pawn_sets: … and ",
            "more pawn sets whose features are wrong",
        ],
    );
    let examples = run
        .stdout
        .lines()
        .filter(|l| l.contains("islands is"))
        .count();
    assert_eq!(examples, 5, "{}", run.stdout);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let text = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&db, &text).unwrap();
    let run = check(&db);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("not a SQLite database"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), text, "file untouched");
    assert_eq!(listing(dir.path()), ["notes.db"]);
}

#[test]
fn a_foreign_sqlite_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE accounts(id, balance)")
        .unwrap();
    let run = check(&db);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("not a pawndex database"),
        "{}",
        run.stderr
    );
}

/// A fresh copy of the base database in `dir` with the root page of `pawn_sets_key` zeroed,
/// and its bytes.
fn with_zeroed_index_page(dir: &Path) -> (PathBuf, Vec<u8>) {
    let db = fresh(dir);
    let (root, page_size) = {
        let conn = Connection::open(&db).unwrap();
        (
            one(
                &conn,
                "SELECT rootpage FROM sqlite_schema WHERE name = 'pawn_sets_key'",
            ),
            one(&conn, "PRAGMA page_size"),
        )
    };
    let mut bytes = std::fs::read(&db).unwrap();
    let start = usize::try_from((root - 1) * page_size).unwrap();
    let end = start + usize::try_from(page_size).unwrap();
    bytes[start..end].fill(0);
    std::fs::write(&db, &bytes).unwrap();
    (db, bytes)
}

#[test]
fn a_damaged_page_is_reported_by_sqlites_integrity_check() {
    let dir = tempfile::tempdir().unwrap();
    let (db, bytes) = with_zeroed_index_page(dir.path());
    let run = check(&db);
    expect_problems(&run, &["sqlite: "]);
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "file untouched");
}

#[test]
fn index_refuses_to_add_to_a_damaged_database_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (db, bytes) = with_zeroed_index_page(dir.path());
    let pgn = format!("{ROOT}/{}", FILES[0]);
    let run = pawndex(&["index", "-q", "--db", db.to_str().unwrap(), &pgn]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("is damaged") && run.stderr.contains("pawndex check"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "file untouched");
}

#[test]
fn an_unfinished_database_is_a_note_not_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    // Both files stored, but the derived tables only of the first: what a run killed before
    // it built them leaves (an index of the first file alone has the same ids).
    let db = fresh(dir.path());
    let first = dir.path().join("first.db");
    index(&first, &FILES[..1]);
    let conn = Connection::open(&db).unwrap();
    conn.execute("ATTACH ?1 AS a", [first.to_str().unwrap()])
        .unwrap();
    conn.execute_batch(
        "DELETE FROM set_games; INSERT INTO set_games SELECT * FROM a.set_games;
         DELETE FROM set_totals; INSERT INTO set_totals SELECT * FROM a.set_totals;
         DELETE FROM bishop_totals; INSERT INTO bishop_totals SELECT * FROM a.bishop_totals;
         UPDATE derived SET through = (SELECT through FROM a.derived),
                            finished = (SELECT finished FROM a.derived);
         DETACH a;",
    )
    .unwrap();
    let pending = one(
        &conn,
        "SELECT max(id) - (SELECT through FROM derived) FROM games",
    );
    assert_eq!(pending, 9);
    drop(conn);
    let run = check(&db);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let note = format!(
        "note: 9 games not yet in the derived tables; run `pawndex migrate --db {}`",
        db.display()
    );
    assert!(run.stdout.contains(&note), "{}", run.stdout);
    assert!(run.stdout.lines().last().unwrap().starts_with("ok: "));

    // The derived tables of the games they cover are still checked.
    Connection::open(&db)
        .unwrap()
        .execute_batch("UPDATE bishop_totals SET positions = positions + 5 WHERE bishop_pairs = 0")
        .unwrap();
    let run = check(&db);
    expect_problems(&run, &["bishop_totals: bishop_pairs 0: positions is"]);
    assert!(run.stdout.contains(&note), "{}", run.stdout);
}

/// Regression: `pawndex index` into an existing database appended to the game lists with
/// SQLite's `||`, which turns the blobs into text that queries cannot read ("Invalid type").
#[test]
fn a_database_indexed_in_two_runs_passes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("two-runs.db");
    index(&db, &FILES[..1]);
    index(&db, &FILES[1..]);
    let run = check(&db);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("ok: 21 games, "), "{}", run.stdout);

    // Every read gives what it gives on the same games indexed in one run: named counts (set
    // totals, game lists, scans) and the per-position statistics built from the game lists.
    let once = fresh(dir.path());
    let reads: Vec<Vec<&str>> = std::fs::read_dir(format!("{ROOT}/queries"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "sql") && !p.ends_with("exact-structure.sql")
        })
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_owned();
            vec!["query", name.leak(), "--count"]
        })
        .chain([
            vec!["stats", "--by", "white_islands", "--per", "position"],
            vec!["stats", "--by", "black_islands", "--per", "game"],
        ])
        .collect();
    assert!(reads.len() > 10);
    reads_agree(&db, &once, reads);
}

/// Every read in `reads` answers the same on both databases, with nothing on stderr.
fn reads_agree(db: &Path, once: &Path, reads: Vec<Vec<&str>>) {
    for args in reads {
        let at = |db: &Path| {
            let mut a = args.clone();
            a.extend(["--db", db.to_str().unwrap()]);
            let run = pawndex(&a);
            assert_eq!(run.code, Some(0), "{a:?}:\n{}", run.stderr);
            assert_eq!(run.stderr, "", "{a:?}");
            run.stdout
        };
        assert_eq!(at(db), at(once), "{args:?}");
    }
}

/// A game none of `FILES` holds, with pawn sets none of them reaches, the last one held for 61
/// plies by knights going back and forth (more than any structure of `FILES` is held: it tops
/// a per-position ranking).
fn extra_game() -> String {
    let mut pgn = String::from(
        "[Event \"tail\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n[WhiteElo \"2400\"]\n\n\
         1. a4 h5 2. a5 h4 3. b4 g5 4. b5 g4 5. a6 Nc6 6. bxc6 dxc6 7. axb7 Bxb7 8. c4 f5 \
         9. c5 e5",
    );
    for i in 0..15 {
        let n = 10 + 2 * i;
        pgn += &format!(" {n}. Nf3 Nf6 {}. Ng1 Ng8", n + 1);
    }
    pgn + " 1-0\n"
}

/// An append of few games to a larger database leaves them in the unmerged tail: the derived
/// tables stay as they were (no page of them rewritten), the run is finished (no note), and
/// every read (counts, statistics from set totals and game lists, the top structures, rows)
/// answers as on the same games indexed in one run.
#[test]
fn a_small_append_stays_in_the_unmerged_tail_and_reads_agree() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("extra.pgn");
    std::fs::write(&extra, extra_game()).unwrap();
    let extra = extra.to_str().unwrap();
    let db = fresh(dir.path());
    let before = one(
        &Connection::open(&db).unwrap(),
        "SELECT sum(positions) FROM set_totals",
    );
    let run = pawndex(&["index", "-q", "--db", db.to_str().unwrap(), extra]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let conn = Connection::open(&db).unwrap();
    assert_eq!(one(&conn, "SELECT max(id) FROM games"), 22);
    assert_eq!(
        one(&conn, "SELECT through FROM derived"),
        21,
        "the game stays in the tail"
    );
    assert_eq!(one(&conn, "SELECT finished FROM derived"), 22);
    assert_eq!(one(&conn, "SELECT sum(positions) FROM set_totals"), before);
    drop(conn);
    let run = check(&db);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("note:"), "{}", run.stdout);

    let once = dir.path().join("once.db");
    let mut files: Vec<String> = FILES.iter().map(|f| format!("{ROOT}/{f}")).collect();
    files.push(extra.to_owned());
    let mut args = vec!["index", "-q", "--db", once.to_str().unwrap()];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(pawndex(&args).code, Some(0));
    let mut reads: Vec<Vec<&str>> = std::fs::read_dir(format!("{ROOT}/queries"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .filter(|p| !p.ends_with("exact-structure.sql"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_owned();
            vec!["query", name.leak(), "--count"]
        })
        .collect();
    reads.extend([
        vec!["stats", "--by", "white_islands", "--per", "position"],
        vec!["stats", "--by", "black_pawns", "--per", "game"],
        vec!["stats", "--by", "white_quart,white_duo", "--per", "game"],
        vec!["stats", "--report", "top-structures"],
        vec![
            "stats",
            "--by",
            "white_pawns,black_pawns",
            "--top",
            "3",
            "--per",
            "position",
        ],
        vec!["find", "--white", "islands>=3", "--count"],
        vec!["query", "white-duo", "--format", "csv"],
    ]);
    reads_agree(&db, &once, reads);

    // `pawndex migrate` merges the tail; then the derived tables equal the one run's.
    let run = pawndex(&["migrate", "--db", db.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("1 game merged into the derived tables"),
        "{}",
        run.stderr
    );
    let conn = Connection::open(&db).unwrap();
    assert_eq!(one(&conn, "SELECT through FROM derived"), 22);
    assert_eq!(
        one(&conn, "SELECT sum(positions) FROM set_totals"),
        one(
            &Connection::open(&once).unwrap(),
            "SELECT sum(positions) FROM set_totals"
        )
    );
    assert_eq!(check(&db).code, Some(0));
}

/// A structure catalogue of this test's own (names that the games of `FILES` reach whatever the
/// built-in catalogue holds), written into `dir`.
fn own_catalogue(dir: &Path) -> PathBuf {
    let cat = dir.join("catalogue");
    std::fs::create_dir_all(&cat).unwrap();
    let head = "family = \"Test\"\ndescription = \"d\"\nsource = \"tests/check.rs\"\n";
    for (key, rules) in [
        (
            "open-game",
            "reversed = true\n[white]\npawns = [\"e4\"]\n[black]\npawns = [\"e5\"]\n",
        ),
        ("d-pawn", "[white]\npawns = [\"d4\"]\n"),
        (
            "no-c-pawns",
            "[white]\nnone = [\"c\"]\n[black]\nnone = [\"c\"]\n",
        ),
    ] {
        std::fs::write(
            cat.join(format!("{key}.toml")),
            format!("name = \"{key}\"\n{head}{rules}"),
        )
        .unwrap();
    }
    cat
}

/// `pawndex ARGS...` with the structure catalogue in `cat`.
fn pawndex_with(cat: &Path, args: &[&str]) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .env("PAWNDEX_STRUCTURES", cat)
        .output()
        .expect("run pawndex");
    let run = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run
}

/// A database of `FILES` named with the own catalogue: it passes the check.
fn named_db(dir: &Path) -> (PathBuf, PathBuf) {
    let cat = own_catalogue(dir);
    let db = dir.join("named.db");
    let paths: Vec<String> = FILES.iter().map(|f| format!("{ROOT}/{f}")).collect();
    let mut args = vec!["index", "-q", "--db", db.to_str().unwrap()];
    args.extend(paths.iter().map(String::as_str));
    let run = pawndex_with(&cat, &args);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let conn = Connection::open(&db).unwrap();
    for sql in [
        "SELECT count(*) FROM runs WHERE structure > 0",
        "SELECT count(*) FROM structure_changes WHERE ply > 0",
    ] {
        assert!(one(&conn, sql) > 0, "nothing to check: {sql} is 0");
    }
    let run = pawndex_with(&cat, &["check", "--db", db.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    (db, cat)
}

#[test]
fn a_run_with_the_wrong_structure_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (db, cat) = named_db(dir.path());
    let conn = Connection::open(&db).unwrap();
    let (game, ply): (i64, i64) = conn
        .query_row(
            "SELECT game_id, first_ply FROM runs WHERE structure > 0 ORDER BY game_id DESC,
             first_ply DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // Another code: the other form (normal or reversed) of the same structure.
    conn.execute(
        "UPDATE runs SET structure = CASE WHEN structure % 2 = 1 THEN structure - 1
         ELSE structure + 1 END WHERE game_id = ?1 AND first_ply = ?2",
        [game, ply],
    )
    .unwrap();
    drop(conn);
    let run = pawndex_with(&cat, &["check", "--db", db.to_str().unwrap()]);
    expect_problems(
        &run,
        &[
            "runs: ",
            &format!("game {game} ply {ply}: structure"),
            "but the pawns",
        ],
    );
}

#[test]
fn a_missing_or_wrong_structure_change_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (db, cat) = named_db(dir.path());
    let conn = Connection::open(&db).unwrap();
    let (game, ply): (i64, i64) = conn
        .query_row(
            "SELECT game_id, ply FROM structure_changes WHERE ply > 0 LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    conn.execute(
        "DELETE FROM structure_changes WHERE game_id = ?1 AND ply = ?2",
        [game, ply],
    )
    .unwrap();
    drop(conn);
    let db_s = db.to_str().unwrap();
    let run = pawndex_with(&cat, &["check", "--db", db_s]);
    expect_problems(
        &run,
        &[
            "structure_changes: ",
            &format!("game {game} ply {ply}: no row for the change"),
        ],
    );
    // A row where the runs do not change, and a row with the wrong codes.
    let conn = Connection::open(&db).unwrap();
    conn.execute(
        "INSERT INTO structure_changes VALUES (?1, ?2, 6, 6, 'e4')",
        [game, ply],
    )
    .unwrap();
    conn.execute_batch(
        "INSERT INTO structure_changes
         SELECT game_id, last_ply, 2, 4, 'Nf3' FROM runs
         WHERE last_ply > first_ply AND last_ply < (SELECT plies FROM games WHERE id = game_id)
         LIMIT 1",
    )
    .unwrap();
    drop(conn);
    let run = pawndex_with(&cat, &["check", "--db", db_s]);
    expect_problems(
        &run,
        &[
            &format!("game {game} ply {ply}: from "),
            "but the runs change",
        ],
    );
    expect_problems(&run, &["where the runs have none"]);
}

#[test]
fn another_catalogue_in_force_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = named_db(dir.path());
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("x.toml"),
        "name = \"X\"\nfamily = \"F\"\ndescription = \"d\"\nsource = \"s\"\n[white]\npawns = [\"a2\"]\n",
    )
    .unwrap();
    let run = pawndex_with(&other, &["check", "--db", db.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("another structure catalogue")
            && run.stdout.contains("pawndex migrate --db"),
        "{}",
        run.stdout
    );
}

/// A structure the runs use, as (id, key).
fn used_structure(conn: &Connection) -> (i64, String) {
    conn.query_row(
        "SELECT n.id, n.key FROM structure_names AS n
         WHERE EXISTS (SELECT 1 FROM runs WHERE structure >> 1 = n.id) ORDER BY n.id LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// A row of `structure_names` deleted: readers then show the runs' code (`stats --by
/// structure` printed `#12`), and check passed with a note. It is a problem, with the catalogue
/// the runs were named with in force or not.
#[test]
fn a_missing_structure_names_row_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (db, cat) = named_db(dir.path());
    let conn = Connection::open(&db).unwrap();
    let (id, key) = used_structure(&conn);
    conn.execute("DELETE FROM structure_names WHERE id = ?1", [id])
        .unwrap();
    drop(conn);
    let db_s = db.to_str().unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("x.toml"),
        "name = \"X\"\nfamily = \"F\"\ndescription = \"d\"\nsource = \"s\"\n[white]\npawns = [\"a2\"]\n",
    )
    .unwrap();
    for run in [
        pawndex_with(&cat, &["check", "--db", db_s]),
        pawndex_with(&other, &["check", "--db", db_s]),
    ] {
        expect_problems(&run, &["structure_names: ", &format!("no row {id}"), &key]);
        expect_problems(
            &run,
            &["runs: ", "structure code", "no row in structure_names"],
        );
    }
}

/// A row of `structure_names` whose key or reversed flag is not the one of the catalogue the
/// runs were named with (its fingerprint), or a row the catalogue does not have.
#[test]
fn a_wrong_or_extra_structure_names_row_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let (db, cat) = named_db(dir.path());
    let conn = Connection::open(&db).unwrap();
    let (id, key) = used_structure(&conn);
    conn.execute(
        "UPDATE structure_names SET key = 'renamed' WHERE id = ?1",
        [id],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO structure_names VALUES (77, 'extra', 'Extra', 'F', 'd', 0)",
        [],
    )
    .unwrap();
    drop(conn);
    let run = pawndex_with(&cat, &["check", "--db", db.to_str().unwrap()]);
    expect_problems(
        &run,
        &["structure_names: ", &format!("row {id}"), "renamed", &key],
    );
    expect_problems(&run, &["structure_names: ", "row 77", "extra"]);
}
