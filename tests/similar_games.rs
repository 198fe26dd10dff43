//! `pawndex similar --games`: the games of the listed structures equal an independent SQL over
//! `ply_features` (the games whose pawns at some ply are a listed structure, each at its least
//! distance and the first ply at that distance), with every option and with games not yet in
//! the game lists; the PGN export holds those games in that order with the comment at that ply;
//! the FEN export holds exactly their positions with a listed structure; bad command lines are
//! usage errors (exit 2).

mod common;

use common::query::{Db, pawndex, read_pgn};
use rusqlite::Connection;
use shakmaty::fen::Fen;

const CARLSBAD: &str = "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8";
const ISOLANI: &str = "8/pp3ppp/4p3/8/3P4/8/PP3PPP/8";
const START: &str = "8/pppppppp/8/8/8/8/PPPPPPPP/8";

/// A listed structure: its pawns (White, Black) and its distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Listed {
    white: u64,
    black: u64,
    distance: u32,
}

/// One expected or printed game row: game, ply, distance, White's and Black's pawns there.
type GameRow = (i64, i64, u32, u64, u64);

/// The pawns (White, Black) of a FEN board part.
fn pawns_of_board(board: &str) -> (u64, u64) {
    let (mut white, mut black) = (0u64, 0u64);
    for (i, row) in board.split('/').enumerate() {
        let rank = 7 - i as u32;
        let mut file = 0u32;
        for c in row.chars() {
            if let Some(d) = c.to_digit(10) {
                file += d;
                continue;
            }
            let bit = 1u64 << (rank * 8 + file);
            match c {
                'P' => white |= bit,
                'p' => black |= bit,
                _ => {}
            }
            file += 1;
        }
    }
    (white, black)
}

fn squares(v: &serde_json::Value) -> u64 {
    v.as_array()
        .unwrap()
        .iter()
        .map(|sq| {
            let sq = sq.as_str().unwrap();
            let b = sq.as_bytes();
            1u64 << ((b[1] - b'1') as u32 * 8 + (b[0] - b'a') as u32)
        })
        .fold(0, |a, b| a | b)
}

/// The structures `pawndex similar ARGS` lists (JSON).
fn listed(db: &Db, args: &[&str]) -> Vec<Listed> {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = db.run("similar", &all);
    out.ok(&format!("similar {args:?}"))
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            Listed {
                white: squares(&v["white_pawns"]),
                black: squares(&v["black_pawns"]),
                distance: v["distance"].as_u64().unwrap() as u32,
            }
        })
        .collect()
}

/// The games reaching a listed structure, by an SQL of its own over `ply_features`: each at its
/// least distance and the first ply at that distance, by distance then game.
fn expected_games(conn: &Connection, listed: &[Listed]) -> Vec<GameRow> {
    let json = serde_json::to_string(
        &listed
            .iter()
            .map(|l| (l.white as i64, l.black as i64, l.distance))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut st = conn
        .prepare(
            "WITH listed(w, b, d) AS (
                 SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
                        json_extract(value, '$[2]')
                 FROM json_each(?1)),
             hits AS (
                 SELECT f.game_id, f.ply, l.d, f.white_pawns, f.black_pawns
                 FROM ply_features AS f
                 JOIN listed AS l ON l.w = f.white_pawns AND l.b = f.black_pawns),
             best AS (SELECT game_id, min(d) AS d FROM hits GROUP BY game_id),
             first AS (
                 SELECT h.game_id, min(h.ply) AS ply, h.d
                 FROM hits AS h JOIN best AS b ON b.game_id = h.game_id AND b.d = h.d
                 GROUP BY h.game_id)
             SELECT t.game_id, t.ply, t.d, h.white_pawns, h.black_pawns
             FROM first AS t JOIN hits AS h ON h.game_id = t.game_id AND h.ply = t.ply
             ORDER BY t.d, t.game_id",
        )
        .unwrap();
    st.query_map([json], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get::<_, i64>(2)? as u32,
            r.get::<_, i64>(3)? as u64,
            r.get::<_, i64>(4)? as u64,
        ))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// The game rows `pawndex similar ARGS --games --format json` prints, with each row's players
/// checked against `games`.
fn printed_games(db: &Db, args: &[&str]) -> Vec<GameRow> {
    printed_games_env(db, args, &[])
}

/// [`printed_games`] with environment variables (`PAWNDEX_PLAN=scan|lists` forces one way of
/// reading the runs: one pass over all of them, or game by game).
fn printed_games_env(db: &Db, args: &[&str], env: &[(&str, &str)]) -> Vec<GameRow> {
    let mut all = args.to_vec();
    all.extend(["--games", "--format", "json"]);
    let out = db.run_env("similar", &all, env);
    let conn = db.conn();
    out.ok(&format!("similar {all:?}"))
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let game = v["game_id"].as_i64().unwrap();
            let (white, black, result): (Option<String>, Option<String>, Option<String>) = conn
                .query_row(
                    "SELECT white, black, result FROM games WHERE id = ?1",
                    [game],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            assert_eq!(v["white"].as_str(), white.as_deref(), "{line}");
            assert_eq!(v["black"].as_str(), black.as_deref(), "{line}");
            assert_eq!(v["result"].as_str(), result.as_deref(), "{line}");
            let (w, b) = pawns_of_board(v["structure"].as_str().unwrap());
            (
                game,
                v["ply"].as_i64().unwrap(),
                v["distance"].as_u64().unwrap() as u32,
                w,
                b,
            )
        })
        .collect()
}

fn option_sets() -> Vec<Vec<&'static str>> {
    vec![
        vec!["--limit", "5"],
        vec!["--limit", "12", "--mirror"],
        vec!["--limit", "8", "--mirror", "--colour-reversed"],
        vec!["--limit", "6", "--ignore-wings", "--min-games", "2"],
        vec!["--limit", "1"],
    ]
}

#[test]
fn the_games_equal_an_sql_over_ply_features() {
    let db = Db::fixtures_and_random_games();
    let conn = db.conn();
    let mut nonempty = 0;
    for target in [CARLSBAD, ISOLANI, START] {
        for options in option_sets() {
            let mut args = vec!["--structure", target];
            args.extend(options.iter().copied());
            let list = listed(&db, &args);
            let want = expected_games(&conn, &list);
            let got = printed_games(&db, &args);
            assert_eq!(got, want, "{args:?}");
            for plan in ["scan", "lists"] {
                let got = printed_games_env(&db, &args, &[("PAWNDEX_PLAN", plan)]);
                assert_eq!(got, want, "PAWNDEX_PLAN={plan} {args:?}");
            }
            nonempty += usize::from(!want.is_empty());
            // --games-limit keeps the first N.
            let mut capped = args.clone();
            capped.extend(["--games-limit", "3"]);
            let got = printed_games(&db, &capped);
            assert_eq!(got, want[..want.len().min(3)], "{capped:?}");
        }
    }
    assert!(nonempty >= 10, "too few targets have games: {nonempty}");
}

#[test]
fn games_not_yet_in_the_game_lists_are_listed() {
    let db = Db::fixtures_and_random_games();
    let tail_from = db.append_unmerged();
    let conn = db.conn();
    let args = ["--structure", START, "--limit", "30"];
    let want = expected_games(&conn, &listed(&db, &args));
    assert!(
        want.iter().any(|g| g.0 >= tail_from),
        "no game of the tail is listed"
    );
    for plan in ["scan", "lists"] {
        let got = printed_games_env(&db, &args, &[("PAWNDEX_PLAN", plan)]);
        assert_eq!(got, want, "tail, PAWNDEX_PLAN={plan}");
    }
}

#[test]
fn pgn_holds_each_game_once_with_the_comment_at_its_ply() {
    let db = Db::fixtures_and_random_games();
    let conn = db.conn();
    for options in option_sets() {
        let mut args = vec!["--structure", CARLSBAD];
        args.extend(options.iter().copied());
        let want = expected_games(&conn, &listed(&db, &args));
        let mut all = args.clone();
        all.extend(["--games", "--format", "pgn"]);
        let out = db.run("similar", &all);
        let games = read_pgn(out.ok(&format!("{all:?}")));
        assert_eq!(games.len(), want.len(), "{all:?}: games");
        for (g, &(id, ply, distance, w, b)) in games.iter().zip(&want) {
            let white: Option<String> = conn
                .query_row("SELECT white FROM games WHERE id = ?1", [id], |r| r.get(0))
                .unwrap();
            assert_eq!(g.tag("White"), white.as_deref(), "{all:?}: game {id}");
            let marks: Vec<&(usize, String)> = g
                .comments
                .iter()
                .filter(|(_, c)| c.starts_with("pawndex similar:"))
                .collect();
            assert_eq!(marks.len(), 1, "{all:?}: game {id}: {:?}", g.comments);
            let (at, text) = marks[0];
            assert_eq!(*at as i64, ply, "{all:?}: game {id}: {text}");
            assert!(
                text.starts_with(&format!("pawndex similar: distance {distance}, ")),
                "{text}"
            );
            // The position at the comment has the structure the comment names.
            let fen = &g.fens()[ply as usize];
            let board = fen.split(' ').next().unwrap();
            assert_eq!(pawns_of_board(board), (w, b), "{all:?}: game {id}");
            let named = text.split(", ").nth(1).unwrap().split(' ').next().unwrap();
            assert_eq!(pawns_of_board(named), (w, b), "{text}");
        }
    }
}

#[test]
fn fen_rows_are_the_positions_with_a_listed_structure() {
    let db = Db::fixtures_and_random_games();
    let conn = db.conn();
    for (target, options) in [
        (CARLSBAD, vec!["--limit", "6", "--mirror"]),
        (ISOLANI, vec!["--limit", "4", "--colour-reversed"]),
    ] {
        let mut args = vec!["--structure", target];
        args.extend(options.iter().copied());
        let list = listed(&db, &args);
        let games = expected_games(&conn, &list);
        assert!(!games.is_empty(), "{args:?}: no games");
        let mut want: Vec<(i64, i64, u64, u64)> = Vec::new();
        for &(id, ..) in games.iter().take(5) {
            let mut st = conn
                .prepare(
                    "SELECT ply, white_pawns, black_pawns FROM ply_features
                     WHERE game_id = ?1 ORDER BY ply",
                )
                .unwrap();
            let rows = st
                .query_map([id], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)? as u64,
                        r.get::<_, i64>(2)? as u64,
                    ))
                })
                .unwrap();
            for row in rows {
                let (ply, w, b) = row.unwrap();
                if list.iter().any(|l| (l.white, l.black) == (w, b)) {
                    want.push((id, ply, w, b));
                }
            }
        }
        let mut all = args.clone();
        all.extend(["--games", "--games-limit", "5", "--format", "fen"]);
        let out = db.run("similar", &all);
        let got: Vec<(i64, i64, u64, u64)> = out
            .ok(&format!("{all:?}"))
            .lines()
            .map(|line| {
                let f: Vec<&str> = line.split('\t').collect();
                assert_eq!(f.len(), 3, "{line}");
                // A real FEN, whose board has the pawns.
                Fen::from_ascii(f[2].as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
                let (w, b) = pawns_of_board(f[2].split(' ').next().unwrap());
                (f[0].parse().unwrap(), f[1].parse().unwrap(), w, b)
            })
            .collect();
        assert_eq!(got, want, "{all:?}");
    }
}

#[test]
fn table_and_csv_list_the_same_games() {
    let db = Db::fixtures_and_random_games();
    let args = ["--structure", CARLSBAD, "--limit", "5", "--games"];
    let want = printed_games(&db, &args[..4]);
    let mut csv_args = args.to_vec();
    csv_args.extend(["--format", "csv"]);
    let out = db.run("similar", &csv_args);
    let csv = out.ok("csv");
    assert!(
        csv.starts_with("game_id,ply,distance,structure,white,black,result,date,eco\n"),
        "{csv}"
    );
    let ids: Vec<i64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids, want.iter().map(|g| g.0).collect::<Vec<_>>());
    let table = db.run("similar", &args);
    let table = table.ok("table");
    assert!(table.starts_with("game_id"), "{table}");
    // A header, a rule, a row per game.
    assert_eq!(table.lines().count(), want.len() + 2, "{table}");
}

#[test]
fn bad_command_lines_are_usage_errors() {
    let db = Db::fixtures();
    for (args, says) in [
        (vec!["--structure", CARLSBAD, "--format", "pgn"], "--games"),
        (vec!["--structure", CARLSBAD, "--format", "fen"], "--games"),
        (
            vec!["--structure", CARLSBAD, "--games-limit", "3"],
            "--games",
        ),
        (
            vec!["--structure", CARLSBAD, "--games", "--games-limit", "0"],
            "--games-limit",
        ),
        (
            vec!["--structure", CARLSBAD, "--games", "--games-limit", "x"],
            "--games-limit",
        ),
    ] {
        let out = db.run("similar", &args);
        out.expect(2, &format!("{args:?}"));
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    let out = pawndex(&[
        "similar",
        "--db",
        "/nonexistent/pawndex.db",
        "--structure",
        CARLSBAD,
        "--games",
        "--format",
        "pgn",
    ]);
    out.expect(1, "missing database");
    let help = pawndex(&["similar", "--help"]);
    assert!(help.ok("help").contains("--games --format pgn"));
}
