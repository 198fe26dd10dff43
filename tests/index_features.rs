//! `ply_features` against references that do not share code with pawndex:
//! - the python-chess pawn bitboards in `tests/fixtures/expected.json`;
//! - naive square-by-square recomputations of every structure feature from the spec;
//! - an independent shakmaty replay of the stored moves, with naive piece-set slot tracking;
//! - seeded random legal games (standard, mid-game FEN and Chess960 starts).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::*;

/// Indexes the three `expected.json` fixture files into a fresh database.
fn index_fixtures(dir: &tempfile::TempDir) -> (PathBuf, Run) {
    let db = dir.path().join("fixtures.db");
    let files: Vec<PathBuf> = FEATURE_FIXTURES.iter().map(|f| root_path(f)).collect();
    let refs: Vec<&std::path::Path> = files.iter().map(PathBuf::as_path).collect();
    let run = index(&db, &["--threads", "2"], &refs);
    (db, run)
}

#[test]
fn fixture_games_match_python_chess_pawns_and_independent_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (db, run) = index_fixtures(&dir);
    run.expect_code(0, "indexing the feature fixtures");
    let expected = expected_games();
    assert_eq!(
        expected.len(),
        22,
        "expected.json holds the 22 fixture games"
    );
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (22, 22, 0, 0),
        "summary: {}",
        run.stderr
    );

    let conn = open_db(&db);
    assert_eq!(count(&conn, "SELECT count(*) FROM games"), 22);
    assert_eq!(count(&conn, "SELECT count(*) FROM rejects"), 0);
    assert_eq!(integrity_check(&conn), "ok");
    check_whole_games(&conn);
    // Every game replayed from its stored moves; every row checked (pawns, bishop pairs,
    // pieceset against the replay, structure features against the naive recomputation).
    let replays = verify_db(&conn);
    assert_eq!(replays.len(), 22);

    // Match stored games to expected.json records: same file, same order.
    let mut by_file: BTreeMap<String, Vec<&(StoredGame, Replay)>> = BTreeMap::new();
    for entry in replays.values() {
        by_file
            .entry(entry.0.source.clone())
            .or_default()
            .push(entry);
    }
    for rel in FEATURE_FIXTURES {
        let source = root_path(rel).to_string_lossy().into_owned();
        let stored = by_file
            .get(&source)
            .unwrap_or_else(|| panic!("no games with source {source}"));
        let mut want: Vec<&ExpectedGame> = expected.iter().filter(|e| e.file == rel).collect();
        want.sort_by_key(|e| e.index);
        assert_eq!(stored.len(), want.len(), "{rel}: number of games indexed");
        let text = std::fs::read(root_path(rel)).unwrap();
        let mut last_offset = -1;
        for ((g, replay), e) in stored.iter().map(|x| (&x.0, &x.1)).zip(want) {
            let what = format!("{rel} #{} (game id {})", e.index, g.id);
            assert!(
                g.offset > last_offset,
                "{what}: offsets increase in file order"
            );
            last_offset = g.offset;
            if let Some(event) = &g.event {
                let at = &text[g.offset as usize..];
                let head = format!("[Event \"{event}\"]");
                assert!(
                    at.starts_with(head.as_bytes()),
                    "{what}: games.offset {} does not point at the game's first byte",
                    g.offset
                );
            }
            let white = g.white.clone().unwrap_or_else(|| "?".to_string());
            assert_eq!(white, e.white, "{what}: White");
            assert_eq!(g.plies as usize, e.plies, "{what}: games.plies");
            assert_eq!(g.chess960, e.chess960, "{what}: games.chess960");
            assert_eq!(
                fen_board_and_turn(&fen_of(&replay.final_pos)),
                fen_board_and_turn(&e.final_fen),
                "{what}: final position after replaying games.moves"
            );
            // The stored rows themselves, against python-chess.
            let rows = ply_rows_of(&conn, g.id);
            assert_eq!(rows.len(), e.plies + 1, "{what}: ply rows");
            for (ply, row) in rows.iter().enumerate() {
                assert_eq!(row[C_PLY], ply as i64, "{what}: ply numbers");
                assert_eq!(
                    row[C_WP], e.white_pawns[ply] as i64,
                    "{what} ply {ply}: white_pawns vs python-chess"
                );
                assert_eq!(
                    row[C_BP], e.black_pawns[ply] as i64,
                    "{what} ply {ply}: black_pawns vs python-chess"
                );
            }
        }
    }
}

/// Values computed by hand from the spec's worked examples, so the naive references above are
/// themselves anchored to the spec.
#[test]
fn spec_worked_examples() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("examples.pgn");
    std::fs::write(
        &pgn,
        concat!(
            // Pieceset example: after 1. e4 d5 2. exd5 black's d7 pawn (slot 19) is gone.
            "[Event \"pieceset\"]\n\n1. e4 d5 2. exd5 *\n\n",
            // Distortion example: white pawns a4 b2 c6 d2 e6 f2 g6 h2 give 26.
            "[Event \"distortion\"]\n[SetUp \"1\"]\n",
            "[FEN \"4k3/8/2P1P1P1/8/P7/8/1P1P1P1P/4K3 w - - 0 1\"]\n\n*\n\n",
            // Runs example: a4 b4 c4 f2 g2 -> trio a4|b4|c4, duo f2|g2, no quart.
            // Black pawns on rank 7 from a to d and on h6: quart and no duo.
            "[Event \"runs\"]\n[SetUp \"1\"]\n",
            "[FEN \"4k3/pppp4/7p/8/PPP5/8/5PP1/4K3 w - - 0 1\"]\n\n*\n\n",
            // FEN slots: a1 rook 0, e1 king 4, e4 pawn takes the lowest free white slot (1);
            // a7 pawn 16, g8 king is not on its home square: lowest free black slot (17).
            "[Event \"fen slots\"]\n[SetUp \"1\"]\n",
            "[FEN \"6k1/p7/8/8/4P3/8/8/R3K3 w - - 0 1\"]\n\n1. Rxa7 *\n\n",
            // En passant clears the captured pawn's slot (d7 pawn = slot 19), and a bishop
            // pair disappears when a bishop is captured.
            "[Event \"ep\"]\n\n1. e4 a6 2. e5 d5 3. exd6 e6 4. Qg4 Bxd6 5. Nf3 Bxh2 6. Rxh2 *\n\n",
        ),
    )
    .unwrap();
    let db = dir.path().join("examples.db");
    index(&db, &[], &[&pgn]).expect_code(0, "spec examples");
    let conn = open_db(&db);
    let id = |event: &str| -> i64 {
        conn.query_row("SELECT id FROM games WHERE event = ?1", [event], |r| {
            r.get(0)
        })
        .unwrap_or_else(|e| panic!("game {event:?} not indexed: {e}"))
    };
    let bb = |squares: &[&str]| -> i64 {
        squares.iter().fold(0u64, |acc, s| {
            let b = s.as_bytes();
            acc | 1u64 << ((b[1] - b'1') as u32 * 8 + (b[0] - b'a') as u32)
        }) as i64
    };

    let rows = ply_rows_of(&conn, id("pieceset"));
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0][C_PIECESET], 0xFFFF_FFFF);
    assert_eq!(rows[3][C_PIECESET], 0xFFF7_FFFF);
    // At the start both sides have the bishop pair.
    assert_eq!((rows[0][C_WBPAIR], rows[0][C_BBPAIR]), (1, 1));

    let rows = ply_rows_of(&conn, id("distortion"));
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0][C_WP],
        bb(&["a4", "b2", "c6", "d2", "e6", "f2", "g6", "h2"])
    );
    assert_eq!(rows[0][8], 26, "white_distortion of the spec example");
    assert_eq!(rows[0][4], 1, "white_islands: all eight files");
    assert_eq!(rows[0][6], 5, "white_dispersion |3 - 8|");
    assert_eq!((rows[0][C_WBPAIR], rows[0][C_BBPAIR]), (0, 0));

    let rows = ply_rows_of(&conn, id("runs"));
    let r = &rows[0];
    assert_eq!(r[12], bb(&["a4", "b4", "c4"]), "white_trio");
    assert_eq!(r[10], bb(&["f2", "g2"]), "white_duo");
    assert_eq!(r[14], 0, "white_quart");
    assert_eq!(r[4], 2, "white_islands");
    assert_eq!(r[6], 7, "white_dispersion |12 - 5|");
    assert_eq!(r[15], bb(&["a7", "b7", "c7", "d7"]), "black_quart");
    assert_eq!((r[11], r[13]), (0, 0), "black duo, trio");
    assert_eq!(r[5], 2, "black_islands");
    assert_eq!(r[7], 7, "black_dispersion |12 - 5|");

    let rows = ply_rows_of(&conn, id("fen slots"));
    let start: i64 = 1 | (1 << 4) | (1 << 1) | (1 << 16) | (1 << 17);
    assert_eq!(rows[0][C_PIECESET], start);
    assert_eq!(
        rows[1][C_PIECESET],
        start & !(1 << 16),
        "Rxa7 takes slot 16"
    );

    let rows = ply_rows_of(&conn, id("ep"));
    assert_eq!(rows.len(), 12);
    assert_eq!(
        rows[5][C_PIECESET],
        0xFFFF_FFFF & !(1 << 19),
        "exd6 e.p. clears slot 19"
    );
    assert_eq!(rows[5][C_BP] & bb(&["d5"]), 0);
    // Bxd6 takes White's e-pawn (slot 12); Bxh2 takes the h-pawn (slot 15); Rxh2 takes
    // Black's f8 bishop (slot 29), ending Black's bishop pair.
    assert_eq!(rows[8][C_PIECESET], rows[5][C_PIECESET] & !(1 << 12));
    assert_eq!(rows[10][C_PIECESET], rows[8][C_PIECESET] & !(1 << 15));
    assert_eq!(rows[10][C_BBPAIR], 1);
    assert_eq!(rows[11][C_PIECESET], rows[10][C_PIECESET] & !(1 << 29));
    assert_eq!(rows[11][C_BBPAIR], 0);
    assert_eq!(rows[11][C_WBPAIR], 1);
}

/// Random legal games, written as SAN PGN, indexed, then compared with the values computed
/// while generating them.
#[test]
fn random_games_match_direct_recomputation() {
    let seed = test_seed(0x5EED_0001);
    let (games, pgn) = random_collection(seed, 250, 120, "random");
    // The generator must reach the interesting cases, or this test proves little.
    let all_moves = || games.iter().flat_map(|g| g.moves.iter());
    let promotions = all_moves().filter(|m| m.is_promotion()).count();
    let under = all_moves()
        .filter(|m| m.promotion().is_some_and(|r| r != shakmaty::Role::Queen))
        .count();
    let en_passant = all_moves().filter(|m| m.is_en_passant()).count();
    let castles_960 = games
        .iter()
        .filter(|g| g.chess960)
        .flat_map(|g| g.moves.iter())
        .filter(|m| m.is_castle())
        .count();
    let castles = all_moves().filter(|m| m.is_castle()).count();
    let fen_starts = games
        .iter()
        .filter(|g| g.fen.is_some() && !g.chess960)
        .count();
    eprintln!(
        "seed {seed}: {promotions} promotions ({under} under), {en_passant} e.p., \
         {castles} castles ({castles_960} in Chess960), {fen_starts} FEN starts"
    );
    assert!(promotions > 0 && under > 0 && en_passant > 0 && castles_960 > 0 && castles > 0);
    assert!(fen_starts > 0);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("random.pgn");
    std::fs::write(&file, &pgn).unwrap();
    let db = dir.path().join("random.db");
    let run = index(&db, &["--threads", "2"], &[&file]);
    run.expect_code(0, &format!("indexing random games (seed {seed})"));
    let s = run.summary();
    assert_eq!(
        (s.read, s.indexed, s.duplicates, s.rejected),
        (250, 250, 0, 0),
        "seed {seed}: {}",
        run.stderr
    );
    let conn = open_db(&db);
    check_whole_games(&conn);
    let stored = stored_games(&conn);
    assert_eq!(stored.len(), games.len());
    let mut failures = Vec::new();
    for (i, g) in games.iter().enumerate() {
        let Some(row) = stored
            .iter()
            .find(|s| s.event.as_deref() == Some(g.event.as_str()))
        else {
            failures.push(format!("{}: not in games", g.event));
            continue;
        };
        let what = format!("seed {seed}, {} (game id {})", g.event, row.id);
        let check = || -> Result<(), String> {
            if row.id != i as i64 + 1 {
                return Err(format!(
                    "id {} but it is game {} of the file",
                    row.id,
                    i + 1
                ));
            }
            if row.plies as usize != g.moves.len() {
                return Err(format!("plies {} != {}", row.plies, g.moves.len()));
            }
            if row.moves != moves_blob(&g.moves) {
                return Err("games.moves differs from the moves played".into());
            }
            if row.chess960 != g.chess960 {
                return Err(format!("chess960 = {}", row.chess960));
            }
            let start = start_position(row.fen.as_deref(), row.chess960)?;
            if fen_board_and_turn(&fen_of(&start)) != fen_board_and_turn(&fen_of(&g.start)) {
                return Err(format!("stored start {:?} != {:?}", row.fen, g.fen));
            }
            if g.fen.is_none() && row.fen.is_some() {
                return Err(format!("standard start stored as FEN {:?}", row.fen));
            }
            check_game_rows(&ply_rows_of(&conn, row.id), row.id, &g.plies)
        };
        if let Err(e) = check() {
            failures.push(format!("{what}: {e}\n{}", g.to_pgn(&mut Rng::new(0))));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} random games differ (rerun with PAWNDEX_TEST_SEED={seed}):\n{}",
        failures.len(),
        games.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // And the independent replay of the stored moves agrees too.
    verify_db(&conn);
}
