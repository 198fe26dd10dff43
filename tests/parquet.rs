//! `pawndex index --parquet` and `pawndex export parquet`: the dataset read back with the
//! parquet crate equals, column by column, the SQLite database of the same input; partitions,
//! shards, refusals, and a killed or interrupted run that publishes nothing.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use common::{BIN, Run, open_db, query_all, random_collection, root_path, test_seed};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rusqlite::types::Value;

/// A small structure catalogue of this test's own (so names are found in random games, and
/// the tests do not depend on the built-in definitions): written once per test process.
fn catalogue() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("parquet-structures-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let head = "family = \"Test\"\ndescription = \"d\"\nsource = \"tests/parquet.rs\"\n";
        for (key, rule) in [
            (
                "open-e",
                "reversed = false\n[white]\nnone = [\"e\"]\n[black]\nnone = [\"e\"]\n",
            ),
            (
                "d-pawn",
                "reversed = true\n[white]\npawns = [\"d4\"]\n[black]\nnone = [\"d\"]\n",
            ),
            (
                "open-game",
                "[white]\npawns = [\"e4\"]\n[black]\npawns = [\"e5\"]\n",
            ),
        ] {
            fs::write(
                dir.join(format!("{key}.toml")),
                format!("name = \"{key}\"\n{head}{rule}"),
            )
            .unwrap();
        }
        dir
    })
}

/// `pawndex ARGS...`, stdin closed, with this test's structure catalogue.
fn pawndex(args: &[&str], what: &str) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env("PAWNDEX_STRUCTURES", catalogue());
    Run::of(cmd, what)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file below `dir` ending in `.parquet`, sorted.
fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(parquet_files(&p));
        } else if p.extension().is_some_and(|x| x == "parquet") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every row of a table of the dataset, as SQLite values (integers, text, blobs, NULL), in
/// file order, with the column names.
fn read_table(dir: &Path, table: &str) -> (Vec<String>, Vec<Vec<Value>>) {
    let mut names = Vec::new();
    let mut rows = Vec::new();
    let files = parquet_files(&dir.join(table));
    assert!(
        !files.is_empty(),
        "no parquet file for {table} in {}",
        dir.display()
    );
    for f in files {
        let reader = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch: RecordBatch = batch.unwrap();
            names = batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            for i in 0..batch.num_rows() {
                rows.push(batch.columns().iter().map(|c| value(c, i)).collect());
            }
        }
    }
    (names, rows)
}

fn value(col: &dyn Array, i: usize) -> Value {
    if col.is_null(i) {
        return Value::Null;
    }
    match col.data_type() {
        DataType::Int64 => Value::Integer(col.as_primitive::<Int64Type>().value(i)),
        DataType::Int32 => Value::Integer(col.as_primitive::<Int32Type>().value(i).into()),
        DataType::Int8 => Value::Integer(col.as_primitive::<Int8Type>().value(i).into()),
        DataType::Boolean => Value::Integer(col.as_boolean().value(i).into()),
        DataType::Utf8 => Value::Text(col.as_string::<i32>().value(i).to_string()),
        DataType::Binary => Value::Blob(col.as_binary::<i32>().value(i).to_vec()),
        other => panic!("unexpected column type {other}"),
    }
}

/// The SQLite rows the dataset's tables must equal, in the same column order.
const GAMES_SQL: &str = "SELECT id, event, site, date, round, white, black, result, white_elo,
    black_elo, eco, plies, source, offset, fen, chess960, moves, hash FROM games ORDER BY id";
const RUNS_SQL: &str = "SELECT r.game_id, r.first_ply, r.last_ply, w.pawns, b.pawns,
    w.islands, b.islands, w.dispersion, b.dispersion, w.distortion, b.distortion,
    w.duo, b.duo, w.trio, b.trio, w.quart, b.quart,
    r.bishop_pairs & 1, r.bishop_pairs >> 1, 4294967295 - r.missing, s.key, r.structure & 1
    FROM runs r JOIN pawn_sets w ON w.id = r.white_set JOIN pawn_sets b ON b.id = r.black_set
    LEFT JOIN structure_names s ON s.id = r.structure >> 1
    ORDER BY r.game_id, r.first_ply";
const CHANGES_SQL: &str = "SELECT game_id, ply, from_structure, from_reversed, to_structure,
    to_reversed, move FROM structure_transitions ORDER BY game_id, ply";
const REJECTS_SQL: &str =
    "SELECT id, source, offset, event, white, black, ply, reason FROM rejects ORDER BY id";

/// Compares a dataset with a database table by table, row by row, column by column; ids
/// of the dataset are `shard << 40 | database id`.
fn assert_same(dataset: &Path, db: &Path, shard: i64) {
    let conn = open_db(db);
    for (table, sql, id_cols) in [
        ("games", GAMES_SQL, &[0usize][..]),
        ("runs", RUNS_SQL, &[0][..]),
        ("rejects", REJECTS_SQL, &[0][..]),
        ("structure_changes", CHANGES_SQL, &[0][..]),
    ] {
        let (names, got) = read_table(dataset, table);
        let mut want = query_all(&conn, sql);
        for row in &mut want {
            for &c in id_cols {
                if let Value::Integer(id) = row[c] {
                    row[c] = Value::Integer(shard << 40 | id);
                }
            }
        }
        assert_eq!(got.len(), want.len(), "{table}: row count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            for (c, (gv, wv)) in g.iter().zip(w).enumerate() {
                assert_eq!(gv, wv, "{table} row {i} column {}", names[c]);
            }
        }
    }
}

/// Inputs with games of every kind: the feature fixtures (Chess960, set-up positions,
/// promotions), broken games (rejects), duplicates, and a random collection.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let (_, pgn) = random_collection(test_seed(11), 400, 120, "Parquet");
    let random = dir.join("random.pgn");
    fs::write(&random, pgn).unwrap();
    let mut files: Vec<PathBuf> = common::FEATURE_FIXTURES
        .iter()
        .map(|f| root_path(f))
        .collect();
    files.push(root_path("tests/fixtures/bad.pgn"));
    files.push(root_path("tests/fixtures/dupes.pgn"));
    files.push(random);
    files
}

#[test]
fn index_parquet_and_export_equal_the_database_column_by_column() {
    let dir = tempfile::tempdir().unwrap();
    let files = inputs(dir.path());
    let file_args: Vec<&str> = files.iter().map(|f| s(f)).collect();
    let db = dir.path().join("g.db");
    let mut args = vec!["index", "--db", s(&db)];
    args.extend(&file_args);
    pawndex(&args, "index into SQLite").expect_code(0, "index");

    let direct = dir.path().join("direct");
    let mut args = vec!["index", "--parquet", s(&direct)];
    args.extend(&file_args);
    let run = pawndex(&args, "index --parquet");
    run.expect_code(0, "index --parquet");
    let summary = run.summary();
    assert!(
        summary.duplicates > 0 && summary.rejected > 0,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("dataset: "), "{}", run.stderr);
    assert_same(&direct, &db, 0);
    // The comparison covers named structures: some runs have one, normal and reversed, and
    // some games change structure.
    let conn = open_db(&db);
    for (sql, what) in [
        (
            "SELECT count(*) FROM runs WHERE structure > 0 AND structure & 1 = 0",
            "runs named in the normal form",
        ),
        (
            "SELECT count(*) FROM runs WHERE structure & 1 = 1",
            "runs named in the reversed form",
        ),
        (
            "SELECT count(*) FROM structure_changes WHERE ply > 0",
            "changes after the start",
        ),
    ] {
        assert!(common::count(&conn, sql) > 0, "no {what}");
    }

    let exported = dir.path().join("exported");
    pawndex(
        &["export", "parquet", "--db", s(&db), "--out", s(&exported)],
        "export parquet",
    )
    .expect_code(0, "export");
    assert_same(&exported, &db, 0);
    // Nothing is left in staging, and only the four tables and the bookkeeping are there.
    for d in [&direct, &exported] {
        let staged = d.join("_pawndex/staging");
        assert!(
            !staged.exists() || fs::read_dir(&staged).unwrap().next().is_none(),
            "staging left behind in {}",
            d.display()
        );
    }
}

#[test]
fn partitions_and_shards_name_files_and_ids() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let sample = root_path("examples/sample.pgn");
    let db = dir.path().join("s.db");
    pawndex(&["index", "--db", s(&db), s(&sample)], "index").expect_code(0, "index");
    for (month, shard) in [("2024-01", "5"), ("2024-02", "6")] {
        let part = format!("month={month}");
        pawndex(
            &[
                "index",
                "--parquet",
                s(&ds),
                "--partition",
                &part,
                "--shard",
                shard,
                s(&sample),
            ],
            "index a partition",
        )
        .expect_code(0, "partition");
        let files = parquet_files(&ds.join("runs").join(&part));
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
        assert_eq!(name, format!("part-{:0>7}-0000.parquet", shard));
    }
    // Both partitions hold the same games under different ids.
    let (_, games) = read_table(&ds, "games");
    let ids: Vec<i64> = games
        .iter()
        .map(|r| match r[0] {
            Value::Integer(i) => i,
            _ => panic!("id"),
        })
        .collect();
    let n = ids.len() as i64 / 2;
    let want: Vec<i64> = (1..=n)
        .map(|i| 5 << 40 | i)
        .chain((1..=n).map(|i| 6 << 40 | i))
        .collect();
    assert_eq!(ids, want);
    // The partition equals the database under its shard.
    let one = dir.path().join("one");
    fs::create_dir_all(one.join("_pawndex")).unwrap();
    fs::rename(ds.join("games/month=2024-01"), one.join("games")).unwrap();
    fs::rename(ds.join("runs/month=2024-01"), one.join("runs")).unwrap();
    fs::rename(ds.join("rejects/month=2024-01"), one.join("rejects")).unwrap();
    fs::rename(
        ds.join("structure_changes/month=2024-01"),
        one.join("structure_changes"),
    )
    .unwrap();
    assert_same(&one, &db, 5);

    // Without --shard, a run takes a number nobody claimed.
    pawndex(
        &[
            "index",
            "--parquet",
            s(&ds),
            "--partition",
            "month=2024-03",
            s(&sample),
        ],
        "index a third partition",
    )
    .expect_code(0, "third");
    let third = parquet_files(&ds.join("games/month=2024-03"));
    assert!(
        third[0]
            .to_str()
            .unwrap()
            .ends_with("part-0000000-0000.parquet"),
        "{third:?}"
    );
    // Shard 6 belongs to month=2024-02: another partition may not take it.
    let run = pawndex(
        &[
            "index",
            "--parquet",
            s(&ds),
            "--partition",
            "month=2024-04",
            "--shard",
            "6",
            s(&sample),
        ],
        "index with a taken shard",
    );
    run.expect_code(1, "taken shard");
    assert!(run.stderr.contains("collide"), "{}", run.stderr);
    assert!(!ds.join("games/month=2024-04").exists());
}

/// A listing of every path below `dir` with its size, to prove that a refused command
/// changed nothing.
fn listing(dir: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd {
            let p = e.unwrap().path();
            let len = fs::metadata(&p).unwrap().len();
            if p.is_dir() {
                out.extend(listing(&p));
            }
            out.insert(p, len);
        }
    }
    out
}

#[test]
fn refusals_leave_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let sample = root_path("examples/sample.pgn");
    pawndex(&["index", "--parquet", s(&ds), s(&sample)], "first").expect_code(0, "first");
    let before = listing(&ds);

    // The partition holds files: refused without --overwrite.
    let run = pawndex(&["index", "--parquet", s(&ds), s(&sample)], "again");
    run.expect_code(1, "again");
    assert!(run.stderr.contains("--overwrite"), "{}", run.stderr);
    // Mixing partitioned and unpartitioned files.
    let run = pawndex(
        &[
            "index",
            "--parquet",
            s(&ds),
            "--partition",
            "m=1",
            s(&sample),
        ],
        "mixing",
    );
    run.expect_code(1, "mixing");
    assert!(run.stderr.contains("cannot mix"), "{}", run.stderr);
    // Usage errors.
    for (args, needle) in [
        (
            vec!["index", "--parquet", s(&ds), "--partition", "m", s(&sample)],
            "NAME=VALUE",
        ),
        (
            vec![
                "index",
                "--parquet",
                s(&ds),
                "--partition",
                "white=x",
                s(&sample),
            ],
            "column",
        ),
        (vec!["index", "--partition", "m=1", s(&sample)], "--parquet"),
        (
            vec![
                "index",
                "--parquet",
                s(&ds),
                "--shard",
                "9999999999",
                s(&sample),
            ],
            "shard",
        ),
    ] {
        let run = pawndex(&args, "usage");
        run.expect_code(2, &format!("{args:?}"));
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
    assert_eq!(listing(&ds), before, "a refused run changed the dataset");

    // A directory that is not a dataset is never written into.
    let mine = dir.path().join("mine");
    fs::create_dir(&mine).unwrap();
    fs::write(mine.join("notes.txt"), "mine").unwrap();
    let run = pawndex(&["index", "--parquet", s(&mine), s(&sample)], "foreign dir");
    run.expect_code(1, "foreign dir");
    assert!(
        run.stderr.contains("not a pawndex dataset"),
        "{}",
        run.stderr
    );
    assert_eq!(fs::read_dir(&mine).unwrap().count(), 1);

    // --overwrite replaces the partition with the new run's files.
    let edge = root_path("tests/fixtures/edge.pgn");
    pawndex(
        &["index", "--parquet", s(&ds), "--overwrite", s(&edge)],
        "overwrite",
    )
    .expect_code(0, "overwrite");
    let (_, games) = read_table(&ds, "games");
    assert!(
        games
            .iter()
            .all(|g| g[12] == Value::Text(s(&edge).to_string())),
        "the old games are gone"
    );
}

/// A big input fed through stdin that stays open, so the run is surely still going when it is
/// killed.
fn start_held_open(ds: &Path) -> (std::process::Child, std::process::ChildStdin) {
    let (_, pgn) = random_collection(test_seed(5), 300, 80, "Held");
    let mut child = Command::new(BIN)
        .args(["index", "--parquet", s(ds), "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::Write as _;
    stdin.write_all(pgn.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Wait until the run has claimed its shard and started writing.
    let staging = ds.join("_pawndex/staging/0000000");
    let start = Instant::now();
    while !staging.join("runs").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, stdin)
}

#[test]
fn a_killed_run_publishes_nothing_and_the_next_run_cleans_up() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let (mut child, stdin) = start_held_open(&ds);
    assert!(child.try_wait().unwrap().is_none(), "still running");
    child.kill().unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.signal(), Some(9), "the run was killed: {status:?}");
    for table in ["games", "runs", "rejects", "structure_changes"] {
        assert!(
            parquet_files(&ds.join(table)).is_empty(),
            "a killed run published {table}"
        );
    }
    assert!(
        ds.join("_pawndex/staging/0000000").exists(),
        "the kill left staging"
    );
    // The next run takes the same shard (same partition), removes the leftovers, publishes.
    let sample = root_path("examples/sample.pgn");
    pawndex(
        &["index", "--parquet", s(&ds), s(&sample)],
        "after the kill",
    )
    .expect_code(0, "after the kill");
    assert_eq!(parquet_files(&ds.join("games")).len(), 1);
    assert!(!ds.join("_pawndex/staging/0000000").exists());
}

#[test]
fn an_interrupted_run_publishes_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let (child, stdin) = start_held_open(&ds);
    let pid = child.id().to_string();
    let kill = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(kill.success());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("nothing was published"), "{err}");
    for table in ["games", "runs", "rejects", "structure_changes"] {
        assert!(
            parquet_files(&ds.join(table)).is_empty(),
            "{table} published"
        );
    }
    assert!(
        !ds.join("_pawndex/staging/0000000").exists(),
        "staging removed"
    );
}

/// Every path below `DIR/_pawndex/staging` (empty when the folder is absent).
fn staging_left(ds: &Path) -> Vec<PathBuf> {
    listing(&ds.join("_pawndex/staging")).into_keys().collect()
}

/// `pawndex ARGS...` with `PAWNDEX_MAX_DATASET_BYTES` set: the run's Parquet files may take
/// that many bytes in all, then a write fails as on a full disk (ENOSPC).
fn pawndex_full(args: &[&str], max_bytes: u64) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("PAWNDEX_STRUCTURES", catalogue())
        .env("PAWNDEX_MAX_DATASET_BYTES", max_bytes.to_string());
    Run::of(cmd, &format!("{args:?} on a full disk"))
}

/// A full disk: exit 1, one line naming the dataset, the file being written (the step) and
/// what to do; nothing published, no staging file left.
fn expect_full_disk(run: &Run, ds: &Path) {
    run.expect_code(1, "a full disk");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line:\n{}", run.stderr);
    let line = lines[0];
    let head = format!(
        "pawndex: error: disk full while writing the dataset {} (writing {}",
        ds.display(),
        ds.join("_pawndex/staging/0000000/").display()
    );
    assert!(line.starts_with(&head), "{line}\nwanted the start: {head}");
    assert!(line.contains(".parquet)"), "{line}");
    assert!(
        line.contains(": nothing was published and this run's unfinished files were removed; "),
        "{line}"
    );
    let advice = format!(
        "free space on the disk of {} and run the same command again",
        ds.display()
    );
    assert!(line.ends_with(&advice), "{line}\nwanted the end: {advice}");
    assert_eq!(
        staging_left(ds),
        Vec::<PathBuf>::new(),
        "staging files left"
    );
    for table in ["games", "runs", "rejects", "structure_changes"] {
        assert!(
            parquet_files(&ds.join(table)).is_empty(),
            "{table} published"
        );
    }
}

#[test]
fn a_full_disk_during_index_parquet_removes_the_staging_files_and_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pgn) = random_collection(test_seed(31), 400, 80, "Full");
    let input = dir.path().join("games.pgn");
    fs::write(&input, pgn).unwrap();
    let ds = dir.path().join("ds");
    let run = pawndex_full(&["index", "-q", "--parquet", s(&ds), s(&input)], 20_000);
    expect_full_disk(&run, &ds);
    // With room, the same command publishes.
    pawndex(
        &["index", "-q", "--parquet", s(&ds), s(&input)],
        "with room",
    )
    .expect_code(0, "with room");
    assert_eq!(parquet_files(&ds.join("games")).len(), 1);
    assert_eq!(staging_left(&ds), Vec::<PathBuf>::new());
}

#[test]
fn a_full_disk_during_export_parquet_removes_the_staging_files_and_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pgn) = random_collection(test_seed(32), 400, 80, "Full");
    let input = dir.path().join("games.pgn");
    fs::write(&input, pgn).unwrap();
    let db = dir.path().join("g.db");
    pawndex(&["index", "-q", "--db", s(&db), s(&input)], "index").expect_code(0, "index");
    let ds = dir.path().join("ds");
    let export = ["export", "parquet", "-q", "--db", s(&db), "--out", s(&ds)];
    expect_full_disk(&pawndex_full(&export, 20_000), &ds);
    pawndex(&export, "with room").expect_code(0, "with room");
    assert_eq!(staging_left(&ds), Vec::<PathBuf>::new());
}

/// `pawndex index --parquet DS -` fed a random collection on a stdin kept open: the run is
/// writing (its staging folder `shard` exists) and cannot finish until stdin is closed.
fn hold_open(ds: &Path, seed: u64, shard: &str) -> (std::process::Child, std::process::ChildStdin) {
    let (_, pgn) = random_collection(test_seed(seed), 200, 60, "Race");
    let mut child = Command::new(BIN)
        .args(["index", "-q", "--parquet", s(ds), "-"])
        .env("PAWNDEX_STRUCTURES", catalogue())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::Write as _;
    stdin.write_all(pgn.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let staging = ds.join("_pawndex/staging").join(shard).join("runs");
    let start = Instant::now();
    while !staging.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run of shard {shard} ended early"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run of shard {shard} never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, stdin)
}

/// The published files of every table, with their sizes.
fn published(ds: &Path) -> BTreeMap<PathBuf, u64> {
    ["games", "runs", "rejects", "structure_changes"]
        .iter()
        .flat_map(|t| listing(&ds.join(t)))
        .collect()
}

#[test]
fn the_losers_of_concurrent_runs_remove_only_their_own_staging_files() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    // Three runs of the same (unpartitioned) partition, all writing at once: shards 0, 1, 2.
    let (a, a_in) = hold_open(&ds, 41, "0000000");
    let (b, b_in) = hold_open(&ds, 42, "0000001");
    let (c, c_in) = hold_open(&ds, 43, "0000002");
    drop(a_in);
    let a = a.wait_with_output().unwrap();
    assert_eq!(
        a.status.code(),
        Some(0),
        "the first to finish publishes: {}",
        String::from_utf8_lossy(&a.stderr)
    );
    let winner = published(&ds);
    assert_eq!(parquet_files(&ds.join("games")).len(), 1);

    // The second finishes while the third is still writing: it loses (the race happened),
    // removes its own files and nothing else.
    drop(b_in);
    let b = b.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&b.stderr);
    assert_eq!(b.status.code(), Some(1), "the loser fails: {err}");
    assert!(
        err.contains(&format!(
            "another pawndex run published {} while this one was writing",
            ds.join("rejects").display()
        )) && err.contains("nothing was published and this run's unfinished files were removed")
            && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        !ds.join("_pawndex/staging/0000001").exists(),
        "the loser's files"
    );
    assert!(
        ds.join("_pawndex/staging/0000002/runs").exists(),
        "the run still writing lost its files"
    );
    assert_eq!(published(&ds), winner, "the winner's files changed");

    drop(c_in);
    let c = c.wait_with_output().unwrap();
    assert_eq!(
        c.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&c.stderr)
    );
    assert_eq!(
        staging_left(&ds),
        Vec::<PathBuf>::new(),
        "staging files left"
    );
    assert_eq!(published(&ds), winner, "the winner's files changed");
}

/// A copy of `db` with the root page of `runs` zeroed: SQLite finds it damaged when a read
/// reaches the runs.
fn zero_runs_root(db: &Path) {
    let (root, page_size): (i64, i64) = {
        let conn = open_db(db);
        (
            conn.query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'runs'",
                [],
                |r| r.get(0),
            )
            .unwrap(),
            conn.query_row("PRAGMA page_size", [], |r| r.get(0))
                .unwrap(),
        )
    };
    let mut bytes = fs::read(db).unwrap();
    let start = usize::try_from((root - 1) * page_size).unwrap();
    bytes[start..start + usize::try_from(page_size).unwrap()].fill(0);
    fs::write(db, bytes).unwrap();
}

#[test]
fn a_failed_export_removes_its_staging_files_and_names_the_damaged_database() {
    let dir = tempfile::tempdir().unwrap();
    let (_, pgn) = random_collection(test_seed(33), 300, 80, "Export");
    let input = dir.path().join("games.pgn");
    fs::write(&input, pgn).unwrap();
    let db = dir.path().join("g.db");
    pawndex(&["index", "-q", "--db", s(&db), s(&input)], "index").expect_code(0, "index");
    zero_runs_root(&db);
    let ds = dir.path().join("ds");
    let run = pawndex(
        &["export", "parquet", "--db", s(&db), "--out", s(&ds)],
        "export of a damaged database",
    );
    run.expect_code(1, "export of a damaged database");
    let err = &run.stderr;
    assert!(
        err.contains(&format!(
            "exporting {} to {} failed (reading the runs)",
            s(&db),
            s(&ds)
        )),
        "the step: {err}"
    );
    assert!(
        err.contains(&format!("the database {} is damaged", s(&db)))
            && err.contains(&format!("`pawndex check --db {}`", s(&db))),
        "{err}"
    );
    assert!(
        !err.contains("rolled back") && !err.contains("PATH"),
        "a read-only command wrote nothing: {err}"
    );
    assert_eq!(
        staging_left(&ds),
        Vec::<PathBuf>::new(),
        "staging files left"
    );
    assert!(published(&ds).is_empty());
}

#[test]
fn overwrite_refuses_files_pawndex_did_not_write_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let sample = root_path("examples/sample.pgn");
    let edge = root_path("tests/fixtures/edge.pgn");
    pawndex(&["index", "--parquet", s(&ds), s(&sample)], "first").expect_code(0, "first");
    // The user's own files at the top of the dataset are never in the way.
    fs::write(ds.join("notes.txt"), "mine").unwrap();
    fs::create_dir(ds.join("mine")).unwrap();
    fs::write(ds.join("mine/keep.txt"), "mine").unwrap();

    // A file, and a folder, of the user's inside a table directory the run would replace.
    for (foreign, is_dir) in [
        (ds.join("games/notes.txt"), false),
        (ds.join("runs/mine"), true),
        (ds.join("structure_changes/.hidden"), false),
    ] {
        if is_dir {
            fs::create_dir(&foreign).unwrap();
            fs::write(foreign.join("x.txt"), "mine").unwrap();
        } else {
            fs::write(&foreign, "mine").unwrap();
        }
        let before = listing(&ds);
        for overwrite in [true, false] {
            let mut args = vec!["index", "--parquet", s(&ds)];
            if overwrite {
                args.push("--overwrite");
            }
            args.push(s(&edge));
            let run = pawndex(&args, "foreign file");
            run.expect_code(1, &format!("{args:?} with {}", foreign.display()));
            assert!(
                run.stderr
                    .contains(&format!("{} was not written by pawndex", foreign.display()))
                    && run.stderr.contains("move it out of"),
                "{args:?}: {}",
                run.stderr
            );
            assert_eq!(listing(&ds), before, "a refused run changed the dataset");
        }
        if is_dir {
            fs::remove_dir_all(&foreign).unwrap();
        } else {
            fs::remove_file(&foreign).unwrap();
        }
    }
    pawndex(
        &["index", "--parquet", s(&ds), "--overwrite", s(&edge)],
        "overwrite",
    )
    .expect_code(0, "overwrite");
    assert_eq!(fs::read_to_string(ds.join("notes.txt")).unwrap(), "mine");
    assert_eq!(
        fs::read_to_string(ds.join("mine/keep.txt")).unwrap(),
        "mine"
    );

    // The same inside a partition.
    let part = dir.path().join("part");
    let month = ["index", "--parquet", s(&part), "--partition", "month=1"];
    let mut args = month.to_vec();
    args.push(s(&sample));
    pawndex(&args, "partitioned").expect_code(0, "partitioned");
    let foreign = part.join("runs/month=1/notes.txt");
    fs::write(&foreign, "mine").unwrap();
    let before = listing(&part);
    let mut args = month.to_vec();
    args.extend(["--overwrite", s(&edge)]);
    let run = pawndex(&args, "partition with a foreign file");
    run.expect_code(1, "partition with a foreign file");
    assert!(
        run.stderr
            .contains(&format!("{} was not written by pawndex", foreign.display())),
        "{}",
        run.stderr
    );
    assert_eq!(listing(&part), before);
}
