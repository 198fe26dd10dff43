//! Inputs: plain PGN, gzip, bzip2 and zstd (recognised by content, not by name), standard
//! input, broken compressed streams, missing files and files that are not PGN at all.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::*;
use rusqlite::types::Value;

/// The same collection for every encoding: the feature fixtures, 1,500 random games and
/// bad.pgn last (its final game has tags and no movetext, which only works at the end).
fn corpus() -> Vec<u8> {
    let (_, random) = random_collection(0xF0_12A7, 1500, 120, "formats");
    let read = |rel: &str| std::fs::read(root_path(rel)).unwrap();
    concat_pgn(&[
        &read("examples/sample.pgn"),
        &read("tests/fixtures/edge.pgn"),
        &read("tests/fixtures/chess960.pgn"),
        random.as_bytes(),
        &read("tests/fixtures/bad.pgn"),
    ])
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// bzip2 with 100 kB blocks, so that half a file still holds whole blocks.
fn bzip2(data: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

/// Decoded bytes right before a fault that an indexer may lose (see the test below).
const LOSS_ALLOWED: i64 = 64 * 1024;

/// What a streaming decoder (4 kB reads) delivers from `bytes` before it fails: the number
/// of bytes, and how many of them are the genuine start of `original` (after the genuine part,
/// a decoder fed garbage may emit garbage for a while before it notices).
fn decodable_prefix(bytes: &[u8], original: &[u8]) -> (i64, i64) {
    use std::io::Read;
    let mut decoder: Box<dyn Read + '_> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::MultiGzDecoder::new(bytes))
    } else if bytes.starts_with(b"BZh") {
        Box::new(bzip2::bufread::MultiBzDecoder::new(bytes))
    } else {
        Box::new(zstd::stream::read::Decoder::with_buffer(bytes).unwrap())
    };
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match decoder.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    let genuine = out.iter().zip(original).take_while(|(a, b)| a == b).count();
    (out.len() as i64, genuine as i64)
}

/// Everything in a database that must not depend on how the input was encoded.
#[derive(Debug, PartialEq)]
struct Contents {
    games: Vec<Vec<Value>>,
    rejects: Vec<Vec<Value>>,
    plies: Vec<PlyRow>,
}

fn contents(db: &Path) -> Contents {
    let conn = open_db(db);
    let mut plies = Vec::new();
    for_each_ply_row(&conn, |r| plies.push(*r));
    Contents {
        games: query_all(&conn, GAMES_NO_SOURCE),
        rejects: query_all(&conn, REJECTS_NO_SOURCE),
        plies,
    }
}

fn sources(db: &Path) -> Vec<Vec<Value>> {
    query_all(
        &open_db(db),
        "SELECT DISTINCT source FROM games UNION SELECT DISTINCT source FROM rejects",
    )
}

/// First difference between two `Contents`, for a readable failure.
fn first_difference(a: &Contents, b: &Contents) -> String {
    for (name, x, y) in [
        ("games", &a.games, &b.games),
        ("rejects", &a.rejects, &b.rejects),
    ] {
        if x.len() != y.len() {
            return format!("{name}: {} rows vs {}", x.len(), y.len());
        }
        if let Some((r, s)) = x.iter().zip(y).find(|(r, s)| r != s) {
            return format!("{name}: first differing row\n  {r:?}\n  {s:?}");
        }
    }
    if a.plies.len() != b.plies.len() {
        return format!("ply_features: {} rows vs {}", a.plies.len(), b.plies.len());
    }
    match a.plies.iter().zip(&b.plies).find(|(r, s)| r != s) {
        Some((r, s)) => format!("ply_features: first differing row\n  {r:?}\n  {s:?}"),
        None => "no difference".into(),
    }
}

/// Indexes the plain corpus, checks it independently, returns (db path, contents, summary).
fn plain_reference(dir: &Path, pgn: &[u8]) -> (PathBuf, Contents, Summary) {
    let file = dir.join("corpus.pgn");
    std::fs::write(&file, pgn).unwrap();
    let db = dir.join("plain.db");
    let run = index(&db, &["--threads", "2"], &[&file]);
    run.expect_code(0, "plain corpus");
    let summary = run.summary();
    // 12 + 7 + 3 fixture games, 1,500 random ones, bad.pgn's 18 records.
    assert_eq!(summary.read, 22 + 1500 + 18, "{}", run.stderr);
    assert_eq!(
        summary.read,
        summary.indexed + summary.duplicates + summary.rejected
    );
    assert_eq!(
        summary.rejected, 7,
        "bad.pgn's seven bad games: {}",
        run.stderr
    );
    let conn = open_db(&db);
    assert_eq!(integrity_check(&conn), "ok");
    let replays = verify_db(&conn);
    assert_eq!(replays.len() as u64, summary.indexed);
    let c = contents(&db);
    (db, c, summary)
}

/// `pawndex index --db DB [extra...] FILE` with `input` piped to its standard input.
fn index_piped(db: &Path, extra: &[&str], file: &str, input: &[u8]) -> Run {
    let mut cmd = std::process::Command::new(BIN);
    cmd.arg("index").arg("--db").arg(db).args(extra).arg(file);
    run_with_stdin(cmd, input)
}

#[test]
fn every_encoding_and_stdin_give_the_same_database() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = corpus();
    let (_, reference, ref_summary) = plain_reference(dir.path(), &pgn);
    assert!(!reference.games.is_empty() && !reference.plies.is_empty());

    let (first, second) = pgn.split_at(pgn.len() / 3);
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("corpus.pgn.gz", gzip(&pgn)),
        ("corpus.pgn.bz2", bzip2(&pgn)),
        ("corpus.pgn.zst", zstd(&pgn)),
        // Content decides, not the name.
        ("gzip-named.pgn", gzip(&pgn)),
        ("bzip2-named.zst", bzip2(&pgn)),
        ("zstd-named.gz", zstd(&pgn)),
        ("no-extension", zstd(&pgn)),
        // Concatenated members / frames (pigz, bgzip, pzstd, pbzip2 write these).
        ("members.pgn.gz", [gzip(first), gzip(second)].concat()),
        ("frames.pgn.zst", [zstd(first), zstd(second)].concat()),
        ("streams.pgn.bz2", [bzip2(first), bzip2(second)].concat()),
    ];
    let mut failures = Vec::new();
    for (name, bytes) in &files {
        let file = dir.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let db = dir.path().join(format!("{name}.db"));
        let run = index(&db, &["--threads", "2"], &[&file]);
        if run.code != Some(0) {
            failures.push(format!("{name}: exit {:?}\n{}", run.code, run.stderr));
            continue;
        }
        run.assert_no_panic(name);
        if parse_summary(&run.stderr) != Some(ref_summary) {
            failures.push(format!("{name}: summary differs:\n{}", run.stderr));
        }
        let got = contents(&db);
        if got != reference {
            failures.push(format!("{name}: {}", first_difference(&reference, &got)));
        }
        let want_source = vec![vec![Value::Text(file.to_string_lossy().into_owned())]];
        assert_eq!(
            sources(&db),
            want_source,
            "{name}: source is the name as given"
        );
    }
    // A pipe given as FILE (`/dev/stdin` here, `<(zcat …)` in a shell) is read once: the
    // checks made before the run read ahead and give the bytes back (issue 23: the database
    // check ate the first 16 bytes, and the first game lost its Event tag).
    for (name, bytes, file) in [
        ("stdin (plain)", pgn.clone(), "-"),
        ("stdin (zstd)", zstd(&pgn), "-"),
        ("a pipe as FILE (plain)", pgn.clone(), "/dev/stdin"),
        ("a pipe as FILE (bzip2)", bzip2(&pgn), "/dev/stdin"),
    ] {
        let db = dir.path().join("stdin.db");
        let _ = std::fs::remove_file(&db);
        let run = index_piped(&db, &["--threads", "2"], file, &bytes);
        if run.code != Some(0) {
            failures.push(format!("{name}: exit {:?}\n{}", run.code, run.stderr));
            continue;
        }
        run.assert_no_panic(name);
        if parse_summary(&run.stderr) != Some(ref_summary) {
            failures.push(format!("{name}: summary differs:\n{}", run.stderr));
        }
        let got = contents(&db);
        if got != reference {
            failures.push(format!("{name}: {}", first_difference(&reference, &got)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn broken_compressed_streams_keep_the_games_before_the_fault() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = corpus();
    let (plain_db, reference, ref_summary) = plain_reference(dir.path(), &pgn);
    // Where every record (indexed or rejected) starts in the decompressed stream.
    let mut record_offsets: Vec<i64> = query_all(
        &open_db(&plain_db),
        "SELECT offset FROM games UNION SELECT offset FROM rejects ORDER BY 1",
    )
    .into_iter()
    .map(|r| match r[0] {
        Value::Integer(o) => o,
        _ => panic!("offset"),
    })
    .collect();
    record_offsets.push(pgn.len() as i64);
    let mut rng = Rng::new(0xBAD_5EED);
    let garbage = rng.bytes(8192);
    let half = |c: Vec<u8>| c[..c.len() / 2].to_vec();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // Valid first half, then garbage: the decoder must fail, not stop quietly.
        (
            "corrupt.pgn.zst",
            [half(zstd(&pgn)), garbage.clone()].concat(),
        ),
        (
            "corrupt.pgn.gz",
            [half(gzip(&pgn)), garbage.clone()].concat(),
        ),
        (
            "corrupt.pgn.bz2",
            [half(bzip2(&pgn)), garbage.clone()].concat(),
        ),
        // Cut short.
        ("truncated.pgn.zst", half(zstd(&pgn))),
        ("truncated.pgn.gz", half(gzip(&pgn))),
        ("truncated.pgn.bz2", half(bzip2(&pgn))),
    ];
    // Not part of the corpus, so its games are not duplicates: 2 games and 1 duplicate.
    let dupes = root_path("tests/fixtures/dupes.pgn");
    let mut failures = Vec::new();
    for (name, bytes) in &cases {
        let file = dir.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let db = dir.path().join(format!("{name}.db"));
        // A good file after the broken one must still be indexed.
        let run = index(&db, &["--threads", "2"], &[&file, &dupes]);
        run.assert_no_panic(name);
        let mut problems = Vec::new();
        if run.code != Some(1) {
            problems.push(format!("exit code {:?}, expected 1", run.code));
        }
        if !run.stderr.contains(file.to_string_lossy().as_ref()) {
            problems.push("stderr does not name the file".to_string());
        }
        let conn = open_db(&db);
        if integrity_check(&conn) != "ok" {
            problems.push("integrity_check failed".into());
        }
        check_whole_games(&conn);
        let from_dupes = count(
            &conn,
            &format!(
                "SELECT count(*) FROM games WHERE source = '{}'",
                dupes.to_string_lossy()
            ),
        );
        if from_dupes != 2 {
            problems.push(format!(
                "{from_dupes} of dupes.pgn's 2 games indexed after it"
            ));
        }
        let got: Vec<Vec<Value>> = query_all(
            &conn,
            &format!(
                "SELECT id, event, site, date, round, white, black, result, white_elo, \
                 black_elo, eco, plies, offset, fen, chess960, moves, hash FROM games \
                 WHERE source = '{}' ORDER BY id",
                file.to_string_lossy()
            ),
        );
        let offset_of = |g: &Vec<Value>| match g[12] {
            Value::Integer(o) => o,
            _ => panic!("offset"),
        };
        let next_record = |o: i64| *record_offsets.iter().find(|&&x| x > o).unwrap();
        let (decoded, genuine) = decodable_prefix(bytes, &pgn);
        if got.len() as u64 >= ref_summary.indexed {
            problems.push(format!("{} games stored from half a file", got.len()));
        }
        // Games that lie wholly inside the genuine decoded data are exactly the plain run's
        // first games (ids, contents, every ply).
        let whole: Vec<Vec<Value>> = got
            .iter()
            .filter(|g| next_record(offset_of(g)) <= genuine)
            .cloned()
            .collect();
        let k = whole.len();
        if whole[..] != reference.games[..k] {
            let i = (0..k).find(|&i| whole[i] != reference.games[i]).unwrap();
            problems.push(format!(
                "stored game {i} differs from the plain run:\n  {:?}\n  {:?}",
                whole[i], reference.games[i]
            ));
        } else {
            let mut plies = Vec::new();
            for_each_ply_row(&conn, |r| {
                if r[C_GAME] <= k as i64 {
                    plies.push(*r);
                }
            });
            let want: Vec<PlyRow> = reference
                .plies
                .iter()
                .filter(|r| r[C_GAME] <= k as i64)
                .copied()
                .collect();
            if plies != want {
                problems.push("ply_features of the stored games differ".into());
            }
        }
        // A clean cut: the decoder reports the fault right where the data ends, so the game
        // cut there is known to be incomplete and must not be stored as if it were whole.
        // (After garbage that decodes, nobody can tell; those games are not judged.)
        if decoded == genuine && got.len() > k {
            problems.push(format!(
                "a game cut at the fault was stored: {:?}",
                &got[k][..13]
            ));
        }
        // Every game the decoder delivered whole before failing is stored. Decoders may
        // swallow the output of the read call that fails (the bzip2 crate does), so up to
        // LOSS_ALLOWED bytes just before the fault may be lost; no more.
        let safe = genuine - LOSS_ALLOWED;
        let must_have = reference
            .games
            .iter()
            .filter(|g| next_record(offset_of(g)) <= safe)
            .count();
        if k < must_have {
            problems.push(format!(
                "only {k} whole games stored, but the decoder delivers {genuine} good bytes \
                 before the fault, and the first {safe} of them hold {must_have} complete \
                 indexable games"
            ));
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {}\n{}", problems.join("; "), run.stderr));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Inputs are checked before the database is created: a missing one refuses the run, naming
/// it, and creates nothing (fix the name and run again).
#[test]
fn a_missing_file_refuses_the_run_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing.db");
    let missing = dir.path().join("no-such-file.pgn");
    let sample = root_path("examples/sample.pgn");
    let edge = root_path("tests/fixtures/edge.pgn");
    let run = index(&db, &[], &[&sample, &missing, &edge]);
    run.expect_code(1, "a missing file among good ones");
    assert!(
        run.stderr.contains(missing.to_string_lossy().as_ref()),
        "stderr names the missing file:\n{}",
        run.stderr
    );
    assert!(!db.exists(), "the database was created");
}

/// Makes a real pawndex database to feed back in by mistake (`pawndex index x.db`).
fn a_database_file(dir: &Path) -> PathBuf {
    let db = dir.join("mistake.db");
    index(&db, &[], &[&root_path("examples/sample.pgn")]).expect_code(0, "making a db");
    db
}

#[test]
fn binary_files_are_errors_that_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0xB1_7A27);
    let noise = dir.path().join("noise.bin");
    std::fs::write(&noise, rng.bytes(1 << 16)).unwrap();
    // A PNG: signature, then binary chunks.
    let png = dir.path().join("picture.png");
    let mut png_bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png_bytes.extend(rng.bytes(1 << 15));
    std::fs::write(&png, png_bytes).unwrap();
    let database = a_database_file(dir.path());
    let sample = root_path("examples/sample.pgn");

    let mut failures = Vec::new();
    // A database given as input is refused before anything is written (`--db` forgotten).
    let out = dir.path().join("mistake.out.db");
    let run = index(&out, &[], &[&database, &sample]);
    run.expect_code(1, "a database as input");
    assert!(
        run.stderr
            .contains("is a SQLite database, not PGN: did you mean --db"),
        "{}",
        run.stderr
    );
    assert!(!out.exists(), "the database was created");
    // A binary file is refused like a missing one: before anything is created (issue 23),
    // naming the file; the good file next to it waits for the run without it.
    for bad in [&noise, &png] {
        let name = bad.file_name().unwrap().to_string_lossy().into_owned();
        let db = dir.path().join(format!("{name}.out.db"));
        let run = index(&db, &["--threads", "2"], &[&sample, bad]);
        run.assert_no_panic(&name);
        let mut problems = Vec::new();
        if run.code != Some(1) {
            problems.push(format!("exit code {:?}, expected 1", run.code));
        }
        let line = format!(
            "pawndex: error: {}: not a PGN file (binary data at the start)",
            bad.display()
        );
        if !run.stderr.lines().any(|l| l == line) {
            problems.push(format!("no line {line:?}"));
        }
        if db.exists() {
            problems.push("the database was created".into());
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {}\n{}", problems.join("; "), run.stderr));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
