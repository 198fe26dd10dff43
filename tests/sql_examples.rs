//! The SQL examples of README.md and docs/*.md (the ```sql blocks, read from the files
//! themselves, as `bench/sql-examples.sh` reads them) give the answer of the pawndex command
//! each names on its `-- same as:` line, on a small database whose answers are not empty: every
//! example is run by a plain rusqlite connection and its rows are compared with the command's
//! output, column by column.
//!
//! The database: 97 random games (ids 1 to 97, so that game 98 is the Carlsbad game of
//! tests/fixtures/structures.pgn, as game 98 of the masters has a Carlsbad), the structure
//! fixtures, the sample games, tests/fixtures/bad.pgn (rejects), games that leave the Isolani and
//! the Carlsbad in several ways, and 300 more random games; then an append small enough to stay
//! in the unmerged tail (above `derived.through`, out of `set_totals`), holding a copy of game 1
//! and of the structure fixtures, so that the examples that add the tail's runs to `set_totals`
//! are checked on both parts.
//!
//! Every runnable example must have a `-- same as:` line and an entry in `CHECKS` (by its
//! title), and every entry an example; a sketch (a statement holding `…`) is not run.

mod common;

use std::path::Path;

use common::doc_files;
use common::query::{Db, csv_records, pawndex, random_games_pgn, root_path, write_file};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value as Json;

/// One statement of a ```sql block.
#[derive(Debug)]
struct Example {
    /// `file:line` of its first line.
    place: String,
    /// Its first comment line, without `-- `.
    title: String,
    /// The command of its `-- same as: pawndex …` line, without any `(…)` after it.
    same_as: Option<String>,
    sql: String,
    /// Holds `…`: a sketch, not meant to run.
    sketch: bool,
}

/// The statements of the ```sql blocks of `text`: a statement ends at a line ending in `;`
/// (after any `--` comment is taken off); the comment lines before its first line of SQL are
/// its header (the first is its title); a blank line before any SQL starts it again.
fn parse_examples(name: &str, text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut lines: Vec<&str> = Vec::new();
    let mut first = 0;
    let mut has_code = false;
    let mut flush = |lines: &mut Vec<&str>, first: usize, has_code: &mut bool| {
        if *has_code {
            let header: Vec<&str> = lines
                .iter()
                .take_while(|l| l.trim_start().starts_with("--"))
                .map(|l| l.trim_start().trim_start_matches("--").trim())
                .collect();
            let sql = lines.join("\n");
            out.push(Example {
                place: format!("{name}:{first}"),
                title: header.first().copied().unwrap_or("").to_string(),
                same_as: header
                    .iter()
                    .find_map(|l| l.strip_prefix("same as: "))
                    .map(str::to_string),
                sketch: sql.contains('…'),
                sql,
            });
        }
        lines.clear();
        *has_code = false;
    };
    for (i, line) in text.lines().enumerate() {
        if !in_block {
            in_block = line.trim_end() == "```sql";
            lines.clear();
            has_code = false;
            continue;
        }
        if line.starts_with("```") {
            flush(&mut lines, first, &mut has_code);
            in_block = false;
            continue;
        }
        if !has_code && line.trim().is_empty() {
            lines.clear();
            continue;
        }
        if lines.is_empty() {
            first = i + 1;
        }
        lines.push(line);
        if line.trim_start().starts_with("--") {
            continue;
        }
        has_code = true;
        let code = line.split("--").next().unwrap_or("").trim_end();
        if code.ends_with(';') {
            flush(&mut lines, first, &mut has_code);
        }
    }
    out
}

fn examples() -> Vec<Example> {
    doc_files()
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let name = path
                .strip_prefix(root_path(""))
                .unwrap()
                .display()
                .to_string();
            parse_examples(&name, &text)
        })
        .collect()
}

/// A command line split into words: spaces separate, '…' and "…" group; it ends at a word
/// that starts with `(` (a remark for the reader).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = command.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.peek() {
            None | Some('(') => return out,
            _ => {}
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '"' || c == '\'' {
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            } else {
                word.push(c);
            }
        }
        out.push(word);
    }
}

/// How an example's rows are compared with its command's output.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// `--format csv`: the example's columns, by name, are the command's, row by row.
    Rows,
    /// As `Rows`, with the command's rows of this game only.
    RowsOfGame(i64),
    /// The command (with `--count`) prints one number: the example's one value.
    Count,
    /// `--format json` of `pawndex structures`: this list of the normal form of this structure,
    /// item by item (turns_into: key or `none`, reversed 0/1, count; leaving_moves: move, count).
    StructuresList(&'static str, &'static str),
    /// `--format json` of `pawndex info`: `rejected` is the number of the example's rows.
    InfoRejected,
}

/// Every runnable example by title: how it is checked, and the least number of rows it must
/// give on the test database (so that an empty answer cannot pass for a right one).
const CHECKS: &[(&str, Check, usize)] = &[
    (
        "The first 20 positions with a white quart (queries/white-quart.sql with a LIMIT).",
        Check::Rows,
        20,
    ),
    (
        "The Carlsbad positions (normal form) of one game, from the view.",
        Check::RowsOfGame(98),
        2,
    ),
    (
        "What the Isolani most often becomes (none: no named structure).",
        Check::StructuresList("isolani", "turns_into"),
        2,
    ),
    (
        "Which moves ended the Carlsbad.",
        Check::StructuresList("carlsbad", "leaving_moves"),
        2,
    ),
    (
        "Games that reached a white quart at some ply (≈ 50 ms on 327,605 master games).",
        Check::Count,
        1,
    ),
    (
        "Games that reached three or more white pawn islands, with the first such ply.",
        Check::Rows,
        20,
    ),
    (
        "Positions with a white pawn on d4 (square 27).",
        Check::Count,
        1,
    ),
    ("Positions with a white quart.", Check::Count, 1),
    (
        "Positions and White's score by white islands.",
        Check::Rows,
        3,
    ),
    (
        "The games of the exact structure of ply 20 of game 1, with the first such ply.",
        Check::Rows,
        2,
    ),
    (
        "Positions with a white quart, the same way.",
        Check::Count,
        1,
    ),
    (
        "Positions and White's score by the number of white pawn islands.",
        Check::Rows,
        3,
    ),
    (
        "Games that reached exactly the pawn structure of ply 20 of game 1, with the first such ply.",
        Check::Rows,
        2,
    ),
    (
        "How White scores by who has the bishop pair at ply 40 (games that last that long).",
        Check::Rows,
        3,
    ),
    ("Why games were rejected.", Check::InfoRejected, 1),
];

/// Games that leave the Isolani and the Carlsbad in several ways, with ties (the Carlsbad is left
/// by c5 and by e4 in three games each, counting the fixtures'), so that the examples' lists are
/// longer than one and their order on ties is checked.
const LEAVING: &str = r#"[Event "c1"]
[Result "1-0"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. e4 1-0

[Event "c2"]
[Result "0-1"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 c5 0-1

[Event "c3"]
[Result "1/2-1/2"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Bd3 c5 1/2-1/2

[Event "c4"]
[Result "1-0"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Nf3 O-O 8. e4 1-0

[Event "i1"]
[Result "1-0"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Nxd5 exd5 1-0

[Event "i2"]
[Result "0-1"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nxc3 11. bxc3 0-1

[Event "i3"]
[Result "1/2-1/2"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Re1 Nxc3 11. bxc3 1/2-1/2

[Event "i4"]
[Result "1-0"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Nxd5 exd5 1-0

[Event "i5"]
[Result "1-0"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bc4 e5 9. dxe5 1-0

[Event "i6"]
[Result "1/2-1/2"]

1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 Nf6 5. Nc3 e6 6. Nf3 Be7 7. cxd5 Nxd5 8. Bd3 Nc6 9. O-O O-O 10. Ne5 Bf6 11. Nxc6 bxc6 1/2-1/2

[Event "c5"]
[Result "0-1"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Qc2 O-O 8. Bd3 Nbd7 9. e4 0-1
"#;

/// The test database (see the top of this file).
fn database() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let random = random_games_pgn(0x2023_0517, 97);
    let first_game = &random[..random[1..].find("[Event ").unwrap() + 1];
    let files = [
        write_file(dir.path(), "random-1.pgn", &random),
        root_path("tests/fixtures/structures.pgn"),
        root_path("tests/fixtures/structure_examples.pgn"),
        root_path("examples/sample.pgn"),
        root_path("tests/fixtures/bad.pgn"),
        write_file(dir.path(), "leaving.pgn", LEAVING),
        write_file(
            dir.path(),
            "random-2.pgn",
            &random_games_pgn(0x0bad_cafe, 300),
        ),
    ];
    let db_path = dir.path().join("examples.db");
    let db_arg = db_path.display().to_string();
    let mut args = vec!["index", "--quiet", "--db", &db_arg];
    let file_args: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(file_args.iter().map(String::as_str));
    pawndex(&args).ok("index");

    let mut tail = first_game.to_string();
    tail.push_str(&std::fs::read_to_string(root_path("tests/fixtures/structures.pgn")).unwrap());
    tail.push('\n');
    tail.push_str(&random_games_pgn(0x7a11, 10));
    let tail = write_file(dir.path(), "tail.pgn", &tail)
        .display()
        .to_string();
    pawndex(&[
        "index",
        "--quiet",
        "--keep-duplicates",
        "--db",
        &db_arg,
        &tail,
    ])
    .ok("append");

    let db = Db { dir, path: db_path };
    let conn = db.conn();
    let white_98: String = conn
        .query_row("SELECT white FROM games WHERE id = 98", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        white_98, "Exchange, QGD",
        "game 98 is the Carlsbad game of structures.pgn"
    );
    let (through, last): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT through FROM derived), (SELECT max(id) FROM games)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(
        through < last,
        "the append was merged (through {through}, last game {last}): nothing tests the tail"
    );
    db
}

/// The example's column names and rows, each value as the CSV output writes it.
fn sql_rows(conn: &Connection, e: &Example) -> (Vec<String>, Vec<Vec<String>>) {
    let mut st = conn
        .prepare(&e.sql)
        .unwrap_or_else(|err| panic!("{}: {err}\n{}", e.place, e.sql));
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let n = names.len();
    let rows = st
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        ValueRef::Null => String::new(),
                        ValueRef::Integer(v) => v.to_string(),
                        ValueRef::Real(v) => v.to_string(),
                        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                        ValueRef::Blob(_) => panic!("{}: a blob column", e.place),
                    })
                })
                .collect()
        })
        .unwrap_or_else(|err| panic!("{}: {err}", e.place))
        .collect::<Result<Vec<Vec<String>>, _>>()
        .unwrap_or_else(|err| panic!("{}: {err}", e.place));
    (names, rows)
}

/// Runs the example's command on `db` with `extra` options; returns stdout.
fn run_command(db: &Path, e: &Example, extra: &[&str]) -> String {
    let command = e.same_as.as_deref().unwrap();
    let words = words(command);
    assert_eq!(
        words.first().map(String::as_str),
        Some("pawndex"),
        "{}: `same as:` must name a pawndex command: {command}",
        e.place
    );
    let db = db.display().to_string();
    let mut args: Vec<&str> = vec![&words[1]];
    args.extend(["--db", &db]);
    args.extend(words[2..].iter().map(String::as_str));
    args.extend_from_slice(extra);
    pawndex(&args)
        .ok(&format!("{}: {command}", e.place))
        .to_string()
}

/// The command's rows for the example's columns (by name), in the command's order.
fn command_rows(e: &Example, csv: &str, names: &[String], game: Option<i64>) -> Vec<Vec<String>> {
    let records = csv_records(csv);
    let header = &records[0];
    let index = |name: &str| {
        header.iter().position(|h| h == name).unwrap_or_else(|| {
            panic!(
                "{}: the example's column {name} is not in the command's header {header:?}",
                e.place
            )
        })
    };
    let columns: Vec<usize> = names.iter().map(|n| index(n)).collect();
    let game_column = game.map(|_| index("game_id"));
    records[1..]
        .iter()
        .filter(|r| match (game, game_column) {
            (Some(id), Some(c)) => r[c] == id.to_string(),
            _ => true,
        })
        .map(|r| columns.iter().map(|&c| r[c].clone()).collect())
        .collect()
}

/// The list `list` of the normal form of `key` in `pawndex structures --format json`, as rows.
fn structures_list(e: &Example, json: &str, key: &str, list: &str) -> Vec<Vec<String>> {
    let all: Json = serde_json::from_str(json).unwrap();
    let row = all
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key && r["reversed"] == false)
        .unwrap_or_else(|| panic!("{}: no normal-form row {key} in the output", e.place));
    let text = |v: &Json| match v {
        Json::Null => "none".to_string(),
        Json::Bool(b) => u8::from(*b).to_string(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    row[list]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no list {list} in the {key} row", e.place))
        .iter()
        .map(|item| match list {
            "turns_into" => vec![
                text(&item["key"]),
                text(&item["reversed"]),
                text(&item["count"]),
            ],
            "leaving_moves" => vec![text(&item["move"]), text(&item["count"])],
            other => panic!("{}: no rule for the list {other}", e.place),
        })
        .collect()
}

/// Checks one example against its command; returns a description of the difference, if any.
fn check_example(db: &Db, conn: &Connection, e: &Example, check: Check, min_rows: usize) {
    let (names, rows) = sql_rows(conn, e);
    let command = e.same_as.as_deref().unwrap();
    assert!(
        rows.len() >= min_rows,
        "{}: {} rows on the test database, expected at least {min_rows} (an empty answer \
         checks nothing)\n{}",
        e.place,
        rows.len(),
        e.sql
    );
    // `pawndex stats` writes CSV only; the others are told to.
    let csv: &[&str] = if command.starts_with("pawndex stats ") {
        &[]
    } else {
        &["--format", "csv"]
    };
    let expected: Vec<Vec<String>> = match check {
        Check::Rows => command_rows(e, &run_command(&db.path, e, csv), &names, None),
        Check::RowsOfGame(id) => command_rows(e, &run_command(&db.path, e, csv), &names, Some(id)),
        Check::Count => {
            let out = run_command(&db.path, e, &[]);
            let n: i64 = out.trim().parse().unwrap_or_else(|_| {
                panic!("{}: `{command}` printed {out:?}, not a count", e.place)
            });
            assert!(n > 0, "{}: the count is 0 on the test database", e.place);
            vec![vec![n.to_string()]]
        }
        Check::StructuresList(key, list) => structures_list(
            e,
            &run_command(&db.path, e, &["--format", "json"]),
            key,
            list,
        ),
        Check::InfoRejected => {
            let out: Json =
                serde_json::from_str(&run_command(&db.path, e, &["--format", "json"])).unwrap();
            let rejected = out["rejected"].as_u64().unwrap();
            assert_eq!(
                rows.len() as u64,
                rejected,
                "{}: {} rows, but `{command}` counts {rejected} rejected games",
                e.place,
                rows.len()
            );
            return;
        }
    };
    assert_eq!(
        rows, expected,
        "{}: the example's rows (left, columns {names:?}) differ from `{command}` (right)\n{}",
        e.place, e.sql
    );
}

#[test]
fn every_sql_example_gives_the_answer_of_its_pawndex_command() {
    let all = examples();
    assert!(
        all.len() >= CHECKS.len(),
        "found only {} SQL examples",
        all.len()
    );
    let db = database();
    let conn = Connection::open_with_flags(&db.path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut used = vec![false; CHECKS.len()];
    for e in &all {
        if e.sketch {
            assert!(
                e.same_as.is_none(),
                "{}: a sketch (it holds …) cannot be checked against a command",
                e.place
            );
            continue;
        }
        assert!(
            e.same_as.is_some(),
            "{}: an SQL example needs a `-- same as: pawndex …` line naming the command that \
             gives its answer ({})",
            e.place,
            e.title
        );
        let Some(i) = CHECKS.iter().position(|(title, _, _)| *title == e.title) else {
            panic!(
                "{}: no check in tests/sql_examples.rs for the example titled {:?}",
                e.place, e.title
            );
        };
        assert!(!used[i], "{}: two examples titled {:?}", e.place, e.title);
        used[i] = true;
        check_example(&db, &conn, e, CHECKS[i].1, CHECKS[i].2);
    }
    for (i, (title, _, _)) in CHECKS.iter().enumerate() {
        assert!(used[i], "no SQL example titled {title:?} any more");
    }
}

#[test]
fn statements_are_split_as_the_bench_splits_them() {
    let text = "intro\n```sql\n-- First.\n-- same as: pawndex find --pawns \"wd4 we4\" --count (x)\n\
                SELECT 1; -- trailing\n\n-- Second.\nSELECT 2\n  -- inside\nFROM t;\n```\n\
                ```sql\nWITH a AS (…) SELECT …;\n```\n```text\nSELECT 3;\n```\n";
    let all = parse_examples("T", text);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[0].place, "T:3");
    assert_eq!(all[0].title, "First.");
    assert_eq!(
        words(all[0].same_as.as_deref().unwrap()),
        ["pawndex", "find", "--pawns", "wd4 we4", "--count"]
    );
    assert_eq!(all[1].title, "Second.");
    assert_eq!(all[1].sql, "-- Second.\nSELECT 2\n  -- inside\nFROM t;");
    assert!(all[2].sketch && !all[0].sketch);
}

/// Whether `e` is an exact-structure example (its command is `similar --max-distance 0`).
fn is_exact(e: &Example) -> bool {
    e.same_as
        .as_deref()
        .is_some_and(|c| c.contains("--max-distance 0"))
}

/// The steps of `EXPLAIN QUERY PLAN` for `sql`.
fn query_plan(conn: &Connection, sql: &str) -> Vec<String> {
    conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map([], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The index docs/sql-examples.md offers for exact structures, as it gives it.
const PAIR_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS runs_pair ON runs((white_set << 32) + black_set)";

#[test]
fn the_pair_index_serves_the_exact_structure_and_survives_appends() {
    let doc = std::fs::read_to_string(root_path("docs/sql-examples.md")).unwrap();
    assert!(
        doc.contains(PAIR_INDEX),
        "docs/sql-examples.md no longer gives `{PAIR_INDEX}`"
    );
    let exact = examples()
        .into_iter()
        .find(is_exact)
        .expect("an exact-structure example");
    let db = database();
    let (_, before) = sql_rows(&db.conn(), &exact);
    Connection::open(&db.path)
        .unwrap()
        .execute_batch(PAIR_INDEX)
        .unwrap();

    // The example now reads the index, with the same answer.
    let conn = db.conn();
    let plan = query_plan(&conn, &exact.sql);
    assert!(
        plan.iter()
            .any(|step| step.contains("INDEX runs_pair (<expr>=?)")),
        "{plan:?}"
    );
    assert_eq!(sql_rows(&conn, &exact).1, before);
    // An index on an expression serves only the statements that have it: no other example
    // reads it (an index on the two columns slowed the counts down 30-fold).
    for e in examples().iter().filter(|e| !e.sketch && !is_exact(e)) {
        let plan = query_plan(&conn, &e.sql);
        assert!(
            !plan.iter().any(|step| step.contains("runs_pair")),
            "{}: {plan:?}",
            e.place
        );
    }
    drop(conn);

    // An append to a database with the index: game 1 again (so the structure gains a game)
    // and more random games. The index holds the new runs, and `pawndex check` accepts it.
    let random = random_games_pgn(0x2023_0517, 97);
    let mut more = random[..random[1..].find("[Event ").unwrap() + 1].to_string();
    more.push_str(&random_games_pgn(0x51de, 30));
    let more = write_file(db.dir.path(), "pair-index.pgn", &more);
    pawndex(&[
        "index",
        "--quiet",
        "--keep-duplicates",
        "--db",
        &db.arg(),
        &more.display().to_string(),
    ])
    .ok("append with the index");
    pawndex(&["check", "--db", &db.arg()]).ok("check with the index");
    let conn = db.conn();
    let (_, after) = sql_rows(&conn, &exact);
    assert_eq!(after.len(), before.len() + 1, "game 1's copy reached it");
    let scan_sql = exact
        .sql
        .replacen("FROM runs AS r\n", "FROM runs AS r NOT INDEXED\n", 1);
    assert_ne!(scan_sql, exact.sql, "the scan is another statement");
    let scan = Example {
        sql: scan_sql,
        ..exact
    };
    assert_eq!(sql_rows(&conn, &scan).1, after);
    let (indexed, all): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM runs INDEXED BY runs_pair WHERE white_set >= 0),
                    (SELECT count(*) FROM runs NOT INDEXED)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(indexed, all, "every run is in the index");
}
