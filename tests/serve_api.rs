//! `pawndex serve` end to end: the real binary on a database indexed from `examples/sample.pgn`,
//! started with `--port 0`, asked over real HTTP (a plain client on a TCP socket, so paths like
//! `/../Cargo.toml` reach the server as written). Every route; each answer that a command also
//! gives compared with that command's `--format json` on the same database; bad input (400/404
//! with a JSON error, never a 500); the embedded files (types, gzip, no path escape, the CSP);
//! the refusal of a missing or foreign database; and serving while `pawndex index` appends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{ISOLANI_FEN, ISOLANI_PGN};

const BIN: &str = env!("CARGO_BIN_EXE_pawndex");
const ROOT_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// A Carlsbad: White a2 b2 d4 e3 f2 g2 h2, Black a7 b7 c6 d5 f7 g7 h7.
const CARLSBAD: &str = "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8";

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Runs pawndex; its exit code, stdout and stderr.
fn pawndex(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON lines a command prints.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A database of the sample games in a temporary folder.
fn sample_db() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sample.db").display().to_string();
    let sample = root("examples/sample.pgn").display().to_string();
    let (code, _, err) = pawndex(&["index", "-q", "--db", &db, &sample]);
    assert_eq!(code, 0, "index: {err}");
    (dir, db)
}

/// A running server, stopped when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(db: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--db", db, "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("http://")
            .and_then(|r| r.strip_suffix('/'))
            .unwrap_or_else(|| panic!("serve printed {line:?}, not its URL"))
            .to_owned();
        Server { child, addr }
    }

    fn get(&self, path: &str) -> Response {
        self.get_with(path, &[])
    }

    fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        request(&self.addr, path, headers)
    }

    /// A 200 JSON answer.
    fn json(&self, path: &str) -> Value {
        let r = self.get(path);
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
        serde_json::from_slice(&r.body).unwrap()
    }

    /// An error answer: its status and its JSON message.
    fn error(&self, path: &str) -> (u16, String) {
        let r = self.get(path);
        assert!(
            r.status == 400 || r.status == 404,
            "{path}: {} {}",
            r.status,
            r.text()
        );
        let v: Value = serde_json::from_slice(&r.body)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {}", r.text()));
        let msg = v["error"].as_str().unwrap_or_default().to_owned();
        assert!(!msg.is_empty(), "{path}: {v}");
        (r.status, msg)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 GET, the path sent as written.
/// A `Host` header given in `headers` replaces the server's address; `("Host", "")` leaves the
/// header out.
fn request(addr: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        req += &format!("Host: {addr}\r\n");
    }
    for (n, v) in headers {
        if !v.is_empty() {
            req += &format!("{n}: {v}\r\n");
        }
    }
    req += "\r\n";
    send(addr, &req)
}

/// One request as written, and its answer.
fn send(addr: &str, req: &str) -> Response {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size_text = String::from_utf8_lossy(&data[..end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        data = &data[end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// A value made safe for a query string.
fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out += &format!("%{b:02X}");
        }
    }
    out
}

#[test]
fn structure_card_names_counts_and_nearest() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let card = server.json(&format!("/api/structure?fen={}", enc(CARLSBAD)));
    assert_eq!(card["named"]["key"], "carlsbad");
    assert_eq!(card["named"]["reversed"], false);
    assert!(
        card["named"]["about"]
            .as_str()
            .unwrap()
            .contains("minority attack")
    );
    assert_eq!(card["nearest"], Value::Array(vec![]));
    assert_eq!(card["features"]["white"]["islands"], 2);
    assert_eq!(card["named_counts"]["key"], "carlsbad");
    let quick = server.json(&format!("/api/structure?fen={}&counts=0", enc(CARLSBAD)));
    assert_eq!(quick["named"], card["named"]);
    assert_eq!(quick["named_counts"], Value::Null);

    // With a Black e-pawn on e6 the Carlsbad fails one condition, in words.
    let near = server.json(&format!(
        "/api/structure?fen={}",
        enc("8/pp3ppp/2p1p3/3p4/3P4/4P3/PP3PPP/8")
    ));
    assert_eq!(near["named"], Value::Null);
    let first = &near["nearest"][0];
    assert_eq!(first["key"], "carlsbad");
    assert_eq!(first["failing"][0], "Black must have no e-pawn");

    // `similar --max-distance 0 --format json` on these pawns (and `more` options): its lines.
    let exactly = |board: &str, more: &[&str]| {
        let mut args = vec![
            "similar",
            "--db",
            &db,
            "--structure",
            board,
            "--max-distance",
            "0",
            "--format",
            "json",
        ];
        args.extend(more);
        let (code, out, err) = pawndex(&args);
        assert_eq!(code, 0, "{err}");
        json_lines(&out)
    };
    // The exact counts equal `similar --max-distance 0` on structures the games reach (the
    // start's pawns in every game).
    for (game, ply) in [(5, 20), (1, 0), (3, 8), (8, 12), (11, 30)] {
        let g = server.json(&format!("/api/game/{game}"));
        let board = g["plies"][ply]["board"].as_str().unwrap().to_owned();
        let card = server.json(&format!("/api/structure?fen={}", enc(&board)));
        let cli = &exactly(&board, &[])[0];
        assert!(cli["positions"].as_u64().unwrap() > 0);
        for k in ["positions", "games", "white_score"] {
            assert_eq!(card["exact"][k], cli[k], "{k} of {board}");
        }
        // A game holds exact pawns over one stretch: the average stay is positions per game.
        let stay = cli["positions"].as_f64().unwrap() / cli["games"].as_f64().unwrap();
        let got = card["exact"]["avg_stay"].as_f64().expect("avg_stay");
        assert!(
            (got - stay).abs() <= 0.005,
            "avg_stay {got} of {board}, not {stay}"
        );
        // Its openings: the ECO codes of the games `similar --games` lists for these pawns.
        let listed = exactly(&board, &["--games"]);
        let mut ecos: std::collections::BTreeMap<String, u64> = Default::default();
        for g in &listed {
            if let Some(e) = g["eco"].as_str().filter(|e| !e.is_empty()) {
                *ecos.entry(e.to_owned()).or_default() += 1;
            }
        }
        let mut want: Vec<(String, u64)> = ecos.into_iter().collect();
        want.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        want.truncate(5);
        let got: Vec<(String, u64)> = card["exact"]["eco"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["eco"].as_str().unwrap().to_owned(),
                    e["games"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "the openings of {board}");
        assert!(!got.is_empty(), "the sample's games have ECO codes");
        let share = card["exact"]["eco"][0]["share"].as_f64().unwrap();
        let expected = 100.0 * got[0].1 as f64 / listed.len() as f64;
        assert!(
            (share - expected).abs() <= 0.05,
            "share {share} of {board}, not {expected}"
        );
    }
    let none = server.json(&format!(
        "/api/structure?fen={}",
        enc("8/8/8/3p4/3P4/8/8/8")
    ));
    assert_eq!(none["exact"]["positions"], 0);
    assert_eq!(none["exact"]["white_score"], Value::Null);
    assert_eq!(none["exact"]["avg_stay"], Value::Null);
    assert_eq!(none["exact"]["eco"], serde_json::json!([]));
}

#[test]
fn similar_rows_equal_the_command() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    for (query, flags) in [
        ("limit=7", vec!["--limit", "7"]),
        (
            "limit=5&mirror=1&reversed=true&ignore_wings=1",
            vec![
                "--limit",
                "5",
                "--mirror",
                "--colour-reversed",
                "--ignore-wings",
            ],
        ),
        (
            "limit=3&min_games=2",
            vec!["--limit", "3", "--min-games", "2"],
        ),
    ] {
        let api = server.json(&format!("/api/similar?fen={}&{query}", enc(CARLSBAD)));
        let mut args = vec![
            "similar",
            "--db",
            &db,
            "--structure",
            CARLSBAD,
            "--format",
            "json",
        ];
        args.extend(flags);
        let (code, out, err) = pawndex(&args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(api["rows"], Value::Array(json_lines(&out)), "{query}");
    }
}

/// `GET /api/plans` answers the document of `pawndex plans --format json` (issue 39), for a
/// named form, the exact pawns of a FEN, one side, game filters and other list lengths.
#[test]
fn plans_equal_the_command() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let lopez = "8/ppp2ppp/3p4/4p3/3PP3/8/PPP2PPP/8";
    for (query, flags) in [
        (
            "structure=lopez-formation",
            vec!["--structure-name", "lopez-formation"],
        ),
        (
            "structure=lopez-formation&side=black&top=3&model_games=1",
            vec![
                "--structure-name",
                "lopez-formation",
                "--side",
                "black",
                "--top",
                "3",
                "--model-games",
                "1",
            ],
        ),
        (
            "structure=lopez-formation&year=1900..&exclude_time_class=blitz",
            vec![
                "--structure-name",
                "lopez-formation",
                "--year",
                "1900..",
                "--exclude-time-class",
                "blitz",
            ],
        ),
        (&*format!("fen={}", enc(lopez)), vec!["--structure", lopez]),
    ] {
        let api = server.json(&format!("/api/plans?{query}"));
        let mut args = vec!["plans", "--db", &db, "--format", "json"];
        args.extend(flags);
        let (code, out, err) = pawndex(&args);
        assert_eq!(code, 0, "{err}");
        let cli: Value = serde_json::from_str(&out).unwrap();
        assert!(cli["games"].as_u64().unwrap() > 0, "{query}: {out}");
        assert_eq!(api, cli, "{query}");
    }
    let (status, msg) = server.error("/api/plans?structure=lopez-formation&side=both-ways");
    assert_eq!(status, 400);
    assert!(msg.starts_with("side=both-ways: "), "{msg}");
}

#[test]
fn game_pages_equal_find_and_exports_stream() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    for (query, flags) in [
        ("", vec![]),
        ("&result=1-0", vec!["--result", "1-0"]),
        (
            "&player=kasparov&date=1990..",
            vec!["--player", "kasparov", "--date", "1990.."],
        ),
        (
            "&white=islands:3..&ply=10..40",
            vec!["--white", "islands:3..", "--ply", "10..40"],
        ),
        // Sorted pages: most games share a key (8 of the 12 have no ratings), so the pages
        // cut through ties.
        ("&sort=elo", vec!["--sort", "elo"]),
        (
            "&sort=date&reverse=1&max_elo=2800",
            vec!["--sort", "date", "--reverse", "--max-elo", "2800"],
        ),
        (
            "&sort=stay&white=islands:2..&min_stay=5",
            vec![
                "--sort",
                "stay",
                "--white",
                "islands:2..",
                "--min-stay",
                "5",
            ],
        ),
        // The typicality's pages: the plans' order of the Lopez Formation's games.
        (
            "&structure=lopez-formation&sort=typicality",
            vec![
                "--structure-name",
                "lopez-formation",
                "--sort",
                "typicality",
            ],
        ),
        (
            "&structure=lopez-formation&sort=typicality&reverse=1",
            vec![
                "--structure-name",
                "lopez-formation",
                "--sort",
                "typicality",
                "--reverse",
            ],
        ),
        (
            "&reverse=1&year=1900..&exclude_time_class=blitz",
            vec![
                "--reverse",
                "--year",
                "1900..",
                "--exclude-time-class",
                "blitz",
            ],
        ),
    ] {
        let mut args = vec!["find", "--db", &db, "--per", "game", "--format", "json"];
        args.extend(flags.iter().copied());
        let (code, out, err) = pawndex(&args);
        assert_eq!(code, 0, "{err}");
        // Every page, following `next`, adds up to the command's list (pages of 1 and 2 read
        // several windows of game ids each).
        for limit in [1, 2, 5, 50] {
            let mut rows = Vec::new();
            let mut after = String::new();
            loop {
                let page = server.json(&format!("/api/games?limit={limit}{query}{after}"));
                rows.extend(page["rows"].as_array().unwrap().iter().cloned());
                match page["next"].as_i64() {
                    Some(n) => after = format!("&after={n}"),
                    None => break,
                }
            }
            assert_eq!(rows, json_lines(&out), "{query} limit {limit}");
        }

        for format in ["pgn", "fen", "csv"] {
            let r = server.get(&format!("/api/games/export?format={format}{query}"));
            assert_eq!(r.status, 200);
            let mut args = vec!["find", "--db", &db, "--per", "game", "--format", format];
            args.extend(flags.iter().copied());
            let (_, out, _) = pawndex(&args);
            assert_eq!(r.text(), out, "{format} {query}");
        }
    }
    let (status, msg) = server.error("/api/games?eco=Z99");
    assert_eq!(status, 400);
    assert!(msg.starts_with("eco=Z99: "), "{msg}");
    let (status, msg) = server.error("/api/games?sort=typicality");
    assert_eq!(status, 400);
    assert!(msg.starts_with("sort=typicality: "), "{msg}");
    let (_, msg) = server.error("/api/games?time_class=fast");
    assert!(msg.starts_with("time_class=fast: "), "{msg}");
    let (_, msg) = server.error("/api/games?min_stay=x");
    assert!(msg.starts_with("min_stay=x: "), "{msg}");
    let (_, msg) = server.error("/api/games?structure=carlsbadd");
    assert!(msg.contains("did you mean carlsbad"), "{msg}");
}

#[test]
fn a_game_replayed() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let g = server.json("/api/game/1");
    let moves = g["moves"].as_array().unwrap();
    let plies = g["plies"].as_array().unwrap();
    assert_eq!(plies.len(), moves.len() + 1);
    assert_eq!(plies[0]["san"], Value::Null);
    assert_eq!(plies[1]["san"], moves[0]);
    assert_eq!(g["tags"]["White"], "Morphy, Paul");
    assert!(
        plies[0]["fen"]
            .as_str()
            .unwrap()
            .starts_with("rnbqkbnr/pppppppp/")
    );
    assert_eq!(plies[0]["white"]["islands"], 1);
    let (status, msg) = server.error("/api/game/99999");
    assert_eq!(status, 404);
    assert!(msg.contains("no game with id 99999"), "{msg}");
    assert_eq!(server.error("/api/game/abc").0, 400);
    assert_eq!(server.error("/api/game/-1").0, 404);
}

#[test]
fn info_and_catalogue_equal_the_commands() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let (_, out, _) = pawndex(&["info", "--db", &db, "--format", "json"]);
    // The same object, but the files by their names only (no absolute path to a web page).
    let mut cli = serde_json::from_str::<Value>(&out).unwrap();
    assert!(cli["db"].as_str().unwrap().starts_with('/'));
    cli["db"] = "sample.db".into();
    for s in cli["sources"].as_array_mut().unwrap() {
        let name = s["source"].as_str().unwrap();
        s["source"] = Path::new(name)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .into();
    }
    let api = server.json("/api/info");
    assert_eq!(api, cli);
    assert!(!api.to_string().contains(ROOT_DIR), "{api}");

    let (_, out, _) = pawndex(&["structures", "--db", &db, "--format", "json"]);
    let cli: Value = serde_json::from_str(&out).unwrap();
    // The command's rows, plus each reached form's most common exact pawns (docs/serve.md).
    let mut rows = server.json("/api/catalogue")["rows"].take();
    for r in rows.as_array_mut().unwrap() {
        let r = r.as_object_mut().unwrap();
        assert_eq!(r.remove("board").is_some(), r["games"] != 0, "{r:?}");
        assert_eq!(r.remove("board_games").is_some(), r["games"] != 0, "{r:?}");
    }
    assert_eq!(rows, cli);
}

#[test]
fn breaks_of_a_form_and_of_exact_pawns() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    // The breaks of a form are its leaving moves, all of them, paginated.
    let (_, out, _) = pawndex(&[
        "structures",
        "--db",
        &db,
        "--top",
        "1000",
        "--format",
        "json",
    ]);
    let cli: Value = serde_json::from_str(&out).unwrap();
    let form = cli
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|r| r["leaving_moves"].as_array().unwrap().len())
        .unwrap();
    let key = format!(
        "{}{}",
        form["key"].as_str().unwrap(),
        if form["reversed"] == true { "~" } else { "" }
    );
    let mut rows = Vec::new();
    let mut after = 0;
    loop {
        let page = server.json(&format!(
            "/api/breaks?structure={}&limit=2&after={after}",
            enc(&key)
        ));
        rows.extend(page["rows"].as_array().unwrap().iter().cloned());
        match page["next"].as_u64() {
            Some(n) => after = n,
            None => break,
        }
    }
    assert_eq!(Value::Array(rows), form["leaving_moves"]);
    assert_eq!(server.error("/api/breaks?structure=nosuch").0, 404);

    // The breaks of an exact structure, here the start's pawns: what the replayed games say
    // (each game's first move that changes the pawns, and the pawns after it).
    let start = "8/pppppppp/8/8/8/8/PPPPPPPP/8";
    let mut want: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for id in 1..=12 {
        let g = server.json(&format!("/api/game/{id}"));
        let plies = g["plies"].as_array().unwrap();
        if let Some(p) = plies.iter().find(|p| p["board"] != start) {
            let key = (
                p["san"].as_str().unwrap().to_owned(),
                p["board"].as_str().unwrap().to_owned(),
            );
            *want.entry(key).or_default() += 1;
        }
    }
    let b = server.json(&format!("/api/breaks?fen={}&limit=500", enc(start)));
    let got: std::collections::BTreeMap<(String, String), u64> = b["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (
                    r["move"].as_str().unwrap().to_owned(),
                    r["board_after"].as_str().unwrap().to_owned(),
                ),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(b["total"], want.len());
    let page = server.json(&format!("/api/breaks?fen={}&limit=1&after=1", enc(start)));
    assert_eq!(page["rows"][0], b["rows"][1]);
}

#[test]
fn statistics_equal_the_command() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    // Statistics: the CSV is the command's; the JSON rows are its records.
    let (_, out, _) = pawndex(&["stats", "--db", &db, "--by", "white_islands"]);
    let csv = server.get("/api/stats?by=white_islands&format=csv");
    assert_eq!(csv.text(), out);
    let rows = server.json("/api/stats?by=white_islands")["rows"].clone();
    assert_eq!(rows.as_array().unwrap().len(), out.lines().count() - 1);
    assert!(rows[0]["white_score"].is_number());
    let again = server.json("/api/stats?by=white_islands")["rows"].clone();
    assert_eq!(rows, again);
    let (_, out, _) = pawndex(&["stats", "--db", &db, "--report", "islands-vs-score"]);
    let csv = server.get("/api/stats?report=islands-vs-score&format=csv");
    assert_eq!(csv.text(), out);
    let svg = server.get("/api/stats?report=islands-vs-score&format=svg");
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
    assert!(svg.text().contains("<svg"));
    // Restricted to an exact structure: the command's --where on the stored bitboards.
    let game = server.json("/api/game/5");
    let board = game["plies"][20]["board"].as_str().unwrap().to_owned();
    let card = server.json(&format!("/api/structure?fen={}", enc(&board)));
    let squares = |side: &str| {
        card[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let b = s.as_str().unwrap().as_bytes();
                1u64 << ((b[1] - b'1') * 8 + (b[0] - b'a'))
            })
            .fold(0, |a, b| a | b) as i64
    };
    let filter = format!(
        "white_pawns = {} AND black_pawns = {}",
        squares("white_pawns"),
        squares("black_pawns")
    );
    let (code, out, err) = pawndex(&[
        "stats", "--db", &db, "--by", "elo_band", "--per", "game", "--where", &filter,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().count() > 1, "{out}");
    let csv = server.get(&format!(
        "/api/stats?by=elo_band&per=game&format=csv&fen={}",
        enc(&board)
    ));
    assert_eq!(csv.text(), out);
    let (_, msg) = server.error("/api/stats?by=white_islandz");
    assert!(msg.contains("unknown column"), "{msg}");
}

#[test]
fn bad_input_is_a_400_in_words_never_a_500() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let long = "p".repeat(10_000);
    let cases = [
        (
            "/api/structure?fen=8/pppppppp/8/8/8/8/PPPPPPPPP/8".to_owned(),
            "9 squares",
        ),
        (
            format!(
                "/api/structure?fen={}",
                enc("8/8/8/8/8/8/pppppppp/ppppppp1")
            ),
            "rank 1 or 8",
        ),
        (
            format!(
                "/api/structure?fen={}",
                enc("8/pppppppp/p7/8/8/8/PPPPPPPP/8")
            ),
            "at most 8",
        ),
        ("/api/structure".to_owned(), "give fen="),
        (format!("/api/structure?fen={long}"), "at most 4096"),
        (
            format!("/api/similar?fen={}&limit=-1", enc(CARLSBAD)),
            "limit=-1",
        ),
        (
            format!("/api/similar?fen={}&limit=100000", enc(CARLSBAD)),
            "from 1 to 500",
        ),
        (
            format!("/api/similar?fen={}&mirror=maybe", enc(CARLSBAD)),
            "mirror=maybe",
        ),
        ("/api/info?x=1".to_owned(), "unknown parameter"),
        ("/api/games?limit=abc".to_owned(), "not a whole number"),
        ("/api/games?ply=9..3".to_owned(), "ply=9..3: "),
        // A filter takes at most 100 values (1,000 made SQL deeper than SQLite takes: a 500).
        (
            format!("/api/games?{}", "white=quart&".repeat(1000)),
            "white: 1000 values given; one filter takes at most 100",
        ),
        (
            format!("/api/games?{}", "player=a&".repeat(999)),
            "player: 999 values given",
        ),
        (
            "/api/structure?fen=8/8/8/8/8/8/8/8/".to_owned(),
            "fen: \"8/8/8/8/8/8/8/8/\" is not a valid FEN: the board part \"8/8/8/8/8/8/8/8/\" ends with a /",
        ),
        (
            "/api/games?date=2020.13.45".to_owned(),
            "date=2020.13.45: \"2020.13.45\" is no date: there is no month 13",
        ),
        (
            "/api/games?min_elo=5000".to_owned(),
            "min_elo=5000: not a rating (give one from 0 to 4000)",
        ),
        (
            "/api/stats?by=phase&min_elo=5000".to_owned(),
            "min_elo=5000: not a rating (give one from 0 to 4000)",
        ),
        // The page's words: its parameters, never the command line's flags.
        (
            "/api/games?structure=nonexist".to_owned(),
            "structure=nonexist: unknown structure",
        ),
        (
            "/api/stats?by=phase&fen=xx".to_owned(),
            "fen: \"xx\" is not a valid FEN",
        ),
        (
            "/api/games?result=2-0".to_owned(),
            "result=2-0: expected 1-0",
        ),
        (
            "/api/games/export?format=docx".to_owned(),
            "give pgn, fen or csv",
        ),
        ("/api/stats".to_owned(), "report=NAME"),
        ("/api/stats?report=nope".to_owned(), "no such report"),
        ("/api/breaks".to_owned(), "structure=KEY"),
        ("/api/structure?fen=%ZZ".to_owned(), ""),
    ];
    for (path, words) in cases {
        let (status, msg) = server.error(&path);
        assert_eq!(status, 400, "{path}: {msg}");
        assert!(msg.contains(words), "{path}: {msg}");
        assert!(msg.len() < 1000, "{path}: the message quotes too much");
        assert!(
            !msg.contains("--"),
            "{path}: a flag of the command line in {msg}"
        );
    }
    let (status, msg) = server.error("/api/nothing");
    assert_eq!(status, 404);
    assert!(msg.contains("docs/serve.md"), "{msg}");
}

#[test]
fn pages_and_files_are_embedded_typed_gzipped_and_fenced() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    for path in [
        "/",
        "/game/3?ply=10",
        "/structures",
        "/stats",
        "/info",
        "/?fen=8/8/8/8/8/8/8/8",
    ] {
        let r = server.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(
            r.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        assert_eq!(
            r.header("content-security-policy"),
            Some("default-src 'self'")
        );
    }
    let plain = server.get("/");
    let gz = server.get_with("/", &[("Accept-Encoding", "gzip, br")]);
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&gz.body[..])
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain.body);
    for path in [
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/..%2fCargo.toml",
        "/vendor/../../Cargo.toml",
        "//etc/passwd",
        "/src/lib.rs",
    ] {
        let r = server.get(path);
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(
            r.header("content-security-policy"),
            Some("default-src 'self'")
        );
    }
    let api = server.get("/api/info");
    assert_eq!(
        api.header("content-security-policy"),
        Some("default-src 'self'")
    );
}

#[test]
fn a_missing_or_foreign_database_is_refused_with_the_commands_words() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db").display().to_string();
    let (code, out, err) = pawndex(&["serve", "--db", &missing, "--port", "0"]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    let (_, _, info_err) = pawndex(&["info", "--db", &missing]);
    assert_eq!(err, info_err);
    assert!(!Path::new(&missing).exists(), "serve created the database");
    let pgn = root("examples/sample.pgn").display().to_string();
    let (code, _, err) = pawndex(&["serve", "--db", &pgn, "--port", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("is PGN, not a pawndex database"), "{err}");
    let foreign = dir.path().join("other.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    let (code, _, err) = pawndex(&[
        "serve",
        "--db",
        &foreign.display().to_string(),
        "--port",
        "0",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("not a pawndex database"), "{err}");
}

#[test]
fn another_address_than_loopback_is_said_on_stderr() {
    let (_dir, db) = sample_db();
    let mut server = Server::start(&db, &["--bind", "0.0.0.0"]);
    let mut line = String::new();
    BufReader::new(server.child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.contains("readable by anyone who can reach this port"),
        "{line}"
    );
    let port = server.addr.rsplit(':').next().unwrap().to_owned();
    let r = request(&format!("127.0.0.1:{port}"), "/api/info", &[]);
    assert_eq!(r.status, 200);
}

/// The sample's games split in two PGN texts: the first `n` games and the rest.
fn split_sample(n: usize) -> (String, String) {
    let text = std::fs::read_to_string(root("examples/sample.pgn")).unwrap();
    let starts: Vec<usize> = text.match_indices("[Event ").map(|(i, _)| i).collect();
    (text[..starts[n]].to_owned(), text[starts[n]..].to_owned())
}

#[test]
fn serving_while_index_appends() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("growing.db").display().to_string();
    let (first, rest) = split_sample(6);
    let first_pgn = dir.path().join("first.pgn");
    std::fs::write(&first_pgn, first).unwrap();
    let (code, _, err) = pawndex(&["index", "-q", "--db", &db, &first_pgn.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    let server = Server::start(&db, &[]);
    assert_eq!(server.json("/api/info")["games"], 6);
    assert_eq!(server.get("/api/game/7").status, 404);

    // The writer reads its games from a pipe held open while requests run: they overlap.
    let mut writer = Command::new(BIN)
        .args(["index", "-q", "--db", &db, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = writer.stdin.take().unwrap();
    let mut during = 0;
    for chunk in rest.as_bytes().chunks(rest.len() / 4 + 1) {
        stdin.write_all(chunk).unwrap();
        stdin.flush().unwrap();
        for path in ["/api/info", "/api/game/1", "/api/games?limit=50"] {
            let r = server.get(path);
            assert_eq!(r.status, 200, "{path} while indexing: {}", r.text());
            assert!(
                writer.try_wait().unwrap().is_none(),
                "the writer ended early"
            );
            during += 1;
        }
        let card = server.json(&format!("/api/structure?fen={}", enc(CARLSBAD)));
        assert!(card["named"]["key"] == "carlsbad");
    }
    assert!(during >= 12, "requests overlapping the append: {during}");
    drop(stdin);
    let status = writer.wait_with_output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );

    // The next request sees every game, whole.
    let info = server.json("/api/info");
    assert_eq!(info["games"], 12);
    let g = server.json("/api/game/12");
    assert_eq!(
        g["plies"].as_array().unwrap().len(),
        g["moves"].as_array().unwrap().len() + 1
    );
    let page = server.json("/api/games?limit=50");
    assert_eq!(page["rows"].as_array().unwrap().len(), 12);
}

/// Each game of a PGN text (tags, then SAN moves without comments or variations) replayed with
/// shakmaty, apart from pawndex's reader and replay: per ply from 1, the position before the
/// move, the move's SAN (no check mark) and the side that played it; then the last position.
type Replayed = (
    Vec<(shakmaty::Chess, String, shakmaty::Color)>,
    shakmaty::Chess,
);
fn replay_games(text: &str) -> Vec<Replayed> {
    use shakmaty::{Chess, Position, san::San};
    let mut games = Vec::new();
    for block in text
        .split("\n\n")
        .filter(|b| !b.trim_start().starts_with('['))
    {
        let mut pos = Chess::default();
        let mut plies = Vec::new();
        for token in block.split_whitespace() {
            if ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
                continue;
            }
            let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if token.is_empty() {
                continue;
            }
            let san: San = token.parse().unwrap_or_else(|e| panic!("{token}: {e}"));
            let m = san.to_move(&pos).unwrap_or_else(|e| panic!("{token}: {e}"));
            let plain = San::from_move(&pos, m).to_string();
            plies.push((pos.clone(), plain, pos.turn()));
            pos.play_unchecked(m);
        }
        if !plies.is_empty() {
            games.push((plies, pos));
        }
    }
    games
}

/// The pawns of a position as bitboards (White's, Black's).
fn pawns_of(pos: &shakmaty::Chess) -> (u64, u64) {
    use shakmaty::Position;
    let b = pos.board();
    ((b.pawns() & b.white()).0, (b.pawns() & b.black()).0)
}

fn side_name(c: shakmaty::Color) -> &'static str {
    if c.is_white() { "white" } else { "black" }
}

/// An API row as (move without check mark, side, count).
fn break_row(r: &Value) -> (String, String, u64) {
    (
        r["move"]
            .as_str()
            .unwrap()
            .trim_end_matches(['+', '#'])
            .to_owned(),
        r["side"].as_str().unwrap_or("(no side)").to_owned(),
        r["count"].as_u64().unwrap(),
    )
}

#[test]
fn breaks_carry_the_side_that_played_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db").display().to_string();
    let isolani = dir.path().join("isolani.pgn");
    std::fs::write(&isolani, ISOLANI_PGN).unwrap();
    let sample = root("examples/sample.pgn").display().to_string();
    let (code, _, err) = pawndex(&[
        "index",
        "-q",
        "--db",
        &db,
        &sample,
        &isolani.display().to_string(),
    ]);
    assert_eq!(code, 0, "index: {err}");
    // The games replayed apart, in the order they were indexed (ids 1, 2, …).
    let mut games = replay_games(&std::fs::read_to_string(&sample).unwrap());
    games.extend(replay_games(ISOLANI_PGN));
    assert_eq!(games.len(), 18);
    let server = Server::start(&db, &[]);

    // These exact pawns: each game's move after its last position with them.
    let target = {
        let v = server.json(&format!("/api/structure?fen={}&counts=0", enc(ISOLANI_FEN)));
        assert_eq!(v["named"]["key"], "isolani", "{v}");
        let sq = |list: &Value| {
            list.as_array().unwrap().iter().fold(0u64, |bb, s| {
                let s = s.as_str().unwrap().as_bytes();
                bb | 1 << (u32::from(s[1] - b'1') * 8 + u32::from(s[0] - b'a'))
            })
        };
        (sq(&v["white_pawns"]), sq(&v["black_pawns"]))
    };
    let mut want: Vec<(String, String, u64)> = Vec::new();
    for (g, end) in &games {
        let last = g.iter().rposition(|(pos, _, _)| pawns_of(pos) == target);
        let Some(i) = last else { continue };
        if pawns_of(end) == target {
            continue; // the game ends with these pawns
        }
        let (_, san, side) = &g[i];
        match want
            .iter_mut()
            .find(|w| w.0 == *san && w.1 == side_name(*side))
        {
            Some(w) => w.2 += 1,
            None => want.push((san.clone(), side_name(*side).to_owned(), 1)),
        }
    }
    let v = server.json(&format!("/api/breaks?fen={}", enc(ISOLANI_FEN)));
    let mut got: Vec<_> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(break_row)
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{v}");
    for san in ["Nxd4", "Bxd4", "Qxd4", "Rxd4", "b6"] {
        assert!(
            got.iter().any(|(m, side, _)| m == san && side == "black"),
            "Black's {san}: {got:?}"
        );
    }
    assert!(
        got.iter().any(|(m, side, _)| m == "d5" && side == "white"),
        "{got:?}"
    );

    // The named Isolani: its leaving moves are the structure changes out of it; the side of each
    // from the replay of its game at its ply.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut st = conn
        .prepare(
            "SELECT game_id, ply, move FROM structure_transitions
             WHERE from_structure = 'isolani' AND from_reversed = 0",
        )
        .unwrap();
    let mut want: Vec<(String, String, u64)> = Vec::new();
    let changes = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .unwrap();
    for c in changes {
        let (game, ply, _) = c.unwrap();
        let (_, san, side) = &games[game as usize - 1].0[ply as usize - 1];
        match want
            .iter_mut()
            .find(|w| w.0 == *san && w.1 == side_name(*side))
        {
            Some(w) => w.2 += 1,
            None => want.push((san.clone(), side_name(*side).to_owned(), 1)),
        }
    }
    assert!(!want.is_empty());
    let v = server.json("/api/breaks?structure=isolani&limit=500");
    let mut got: Vec<_> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(break_row)
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{v}");
    // The catalogue's copy of the report says the same.
    let cat = server.json("/api/catalogue?top=1000");
    let row = cat["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "isolani" && r["reversed"] == false)
        .unwrap();
    let mut from_catalogue: Vec<_> = row["leaving_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(break_row)
        .collect();
    from_catalogue.sort();
    assert_eq!(from_catalogue, got);
}

/// The catalogue's link of a named form opens its most common exact form: the pawns reached in
/// the most games among its positions, counted here apart through the `ply_features` view.
#[test]
fn the_catalogue_names_each_forms_most_common_pawns() {
    let (_dir, db) = sample_db();
    assert_common_forms(&db, 5);
}

/// The same on 3,000 games of the masters corpus (many forms, reached in hundreds of games,
/// read in slices of games on several threads and added up), when `../shared` is there.
#[test]
fn the_catalogue_boards_on_a_corpus_slice() {
    let shard = root("../shared/corpus/masters-1.pgn.zst");
    if !shard.is_file() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing and CI=true",
            shard.display()
        );
        eprintln!("SKIPPED: {} does not exist", shard.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("slice.pgn");
    let mut text = Vec::new();
    zstd::Decoder::new(std::fs::File::open(&shard).unwrap())
        .unwrap()
        .read_to_end(&mut text)
        .unwrap();
    // The first 3,000 records.
    let mut starts = text
        .windows(8)
        .enumerate()
        .filter(|(i, w)| *w == b"[Event \"" && (*i == 0 || text[i - 1] == b'\n'))
        .map(|(i, _)| i);
    let end = starts.nth(3000).unwrap();
    std::fs::write(&pgn, &text[..end]).unwrap();
    let db = dir.path().join("slice.db");
    let db = db.to_str().unwrap();
    let (code, _, err) = pawndex(&["index", "--db", db, pgn.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_common_forms(db, 20);
}

/// Every form of `/api/catalogue` that `db` reaches (at least `forms` of them) has as `board`
/// one of its exact forms reached in the most games, and that many as `board_games`.
fn assert_common_forms(db: &str, forms: usize) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut st = conn
        .prepare(
            "SELECT structure, structure_reversed, white_pawns, black_pawns,
                    count(DISTINCT game_id) AS games
             FROM ply_features WHERE structure IS NOT NULL
             GROUP BY 1, 2, 3, 4",
        )
        .unwrap();
    // (key, reversed) -> (most games, the boards with that many)
    let mut want: std::collections::HashMap<(String, bool), (u64, Vec<String>)> =
        std::collections::HashMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)? == 1,
                r.get::<_, i64>(2)? as u64,
                r.get::<_, i64>(3)? as u64,
                r.get::<_, i64>(4)? as u64,
            ))
        })
        .unwrap();
    for row in rows {
        let (key, reversed, white, black, games) = row.unwrap();
        let board = board_of(white, black);
        let e = want.entry((key, reversed)).or_insert((0, Vec::new()));
        if games > e.0 {
            *e = (games, vec![board]);
        } else if games == e.0 {
            e.1.push(board);
        }
    }
    assert!(want.len() >= forms, "{want:?}");
    let server = Server::start(db, &[]);
    let cat = server.json("/api/catalogue");
    let mut seen = 0;
    for r in cat["rows"].as_array().unwrap() {
        let key = (r["key"].as_str().unwrap().to_owned(), r["reversed"] == true);
        match want.get(&key) {
            Some((games, boards)) => {
                assert_eq!(r["board_games"], *games, "{key:?}: {r}");
                let board = r["board"].as_str().unwrap_or_default();
                assert!(
                    boards.iter().any(|b| b == board),
                    "{key:?}: {board} not in {boards:?}"
                );
                seen += 1;
            }
            None => assert!(r["board"].is_null(), "{key:?} has no position: {r}"),
        }
    }
    assert_eq!(seen, want.len());
}

/// The board part of a FEN of these pawns.
fn board_of(white: u64, black: u64) -> String {
    let mut out = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let bit = 1u64 << (rank * 8 + file);
            let c = if white & bit != 0 {
                'P'
            } else if black & bit != 0 {
                'p'
            } else {
                empty += 1;
                continue;
            };
            if empty > 0 {
                out += &empty.to_string();
                empty = 0;
            }
            out.push(c);
        }
        if empty > 0 {
            out += &empty.to_string();
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// Stops the server and returns what it wrote on standard error.
fn stop_and_read_stderr(mut server: Server) -> String {
    let _ = server.child.kill();
    let mut err = String::new();
    if let Some(mut e) = server.child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    err
}

#[test]
fn only_requests_naming_this_server_are_answered() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &["--allow-host", "chess.local"]);
    let port = server.addr.rsplit(':').next().unwrap().to_owned();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        format!("chess.local:{port}"),
    ] {
        let r = server.get_with("/api/info", &[("Host", &host)]);
        assert_eq!(r.status, 200, "{host}: {}", r.text());
    }
    // DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1.
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_owned(),
        "localhost".to_owned(),
        format!("localhost:{}", port.parse::<u16>().unwrap() ^ 1),
    ] {
        for path in ["/api/info", "/", "/app.js"] {
            let r = server.get_with(path, &[("Host", &host)]);
            assert_eq!(r.status, 403, "{host} {path}: {}", r.text());
            assert!(
                r.text().contains("not a name of this server"),
                "{}",
                r.text()
            );
        }
    }
    // No Host at all (HTTP/1.0), and a request target naming another host.
    let r = send(&server.addr, "GET /api/info HTTP/1.0\r\n\r\n");
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(r.text().contains("names no host"), "{}", r.text());
    let r = send(
        &server.addr,
        &format!(
            "GET http://evil.example:{port}/api/info HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            server.addr
        ),
    );
    assert_eq!(r.status, 403, "{}", r.text());
    let err = stop_and_read_stderr(server);
    assert!(
        err.contains("refused a request for /api/info: the host \"evil.example")
            && err.contains("--allow-host"),
        "{err}"
    );
}

#[test]
fn unknown_paths_are_a_page_to_a_browser_and_json_to_a_client() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let browser = [("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")];
    // `/games` and `/similar` are no views of the page (web/app.js has none).
    for path in ["/games", "/similar", "/nonexistent", "/game/3/x"] {
        let r = server.get_with(path, &browser);
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert!(
            r.text().contains("Not found") && r.text().contains(path),
            "{}",
            r.text()
        );
        let (status, msg) = server.error(path);
        assert_eq!(status, 404);
        assert!(msg.contains("no page or file"), "{msg}");
    }
    let r = server.get_with("/%3Cscript%3E", &browser);
    assert!(!r.text().contains("<script>"), "{}", r.text());
    let r = server.get_with("/api/nothing", &browser);
    assert_eq!(r.status, 404);
    assert_eq!(r.header("content-type"), Some("application/json"));
}

/// A database of `n` random games (about 90 plies each) in a temporary folder.
fn random_db(n: usize) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("random.pgn");
    std::fs::write(&pgn, common::random_pgn(37, n, 120, "random", 0)).unwrap();
    let db = dir.path().join("random.db").display().to_string();
    let (code, _, err) = pawndex(&["index", "-q", "--db", &db, &pgn.display().to_string()]);
    assert_eq!(code, 0, "index: {err}");
    (dir, db)
}

/// A socket to `addr` with a 4 KiB receive buffer (set before it connects), so that a client
/// that does not read stalls the server's writes early.
fn small_socket(addr: &str) -> TcpStream {
    use std::os::fd::FromRawFd;
    let sa: std::net::SocketAddrV4 = addr.parse().unwrap();
    // SAFETY: plain socket calls on a descriptor this function owns until it is wrapped.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let size: libc::c_int = 4096;
        let r = libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&raw const size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        assert_eq!(r, 0);
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: sa.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*sa.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        let r = libc::connect(
            fd,
            (&raw const sin).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(r, 0);
        TcpStream::from_raw_fd(fd)
    }
}

#[test]
fn exports_nobody_reads_leave_the_other_requests_answered() {
    let (_dir, db) = random_db(10_000);
    let server = Server::start(&db, &[]);
    // Two (more than the pool's connections on a 2-core machine) exports started, their
    // first bytes read (they are streaming: each holds what it reads with), then never read.
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut s = small_socket(&server.addr);
        s.write_all(
            format!(
                "GET /api/games/export?format=pgn HTTP/1.1\r\nHost: {}\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        )
        .unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut first = [0u8; 512];
        let n = s.read(&mut first).unwrap();
        assert!(
            first[..n].starts_with(b"HTTP/1.1 200"),
            "{:?}",
            String::from_utf8_lossy(&first[..n])
        );
        stalled.push(s);
    }
    // The interactive requests are answered (a bounded wait: before, they waited for the
    // exports, which never end).
    for path in [
        "/api/info".to_owned(),
        format!("/api/similar?fen={}&limit=3", enc(CARLSBAD)),
    ] {
        let mut s = TcpStream::connect(&server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(
            format!(
                "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)
            .unwrap_or_else(|e| panic!("{path}: no answer while exports stall ({e})"));
        assert_eq!(parse_response(&raw).status, 200, "{path}");
    }
    // A third export is refused while two are sent, in words.
    let (status, msg) = {
        let r = server.get("/api/games/export?format=pgn");
        (r.status, String::from_utf8_lossy(&r.body).into_owned())
    };
    assert_eq!(status, 503, "{msg}");
    assert!(msg.contains("exports are being sent already"), "{msg}");
    // The exports were stalled, not finished: what their sockets hold is no whole file.
    for s in &mut stalled {
        s.set_nonblocking(true).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let n = s.read(&mut buf).unwrap_or(0);
        assert!(!buf[..n].ends_with(b"0\r\n\r\n"), "an export ended");
    }
}

#[test]
fn statistics_that_would_make_too_many_groups_are_refused_in_words() {
    let (_dir, db) = random_db(10_000);
    let server = Server::start(&db, &[]);
    // One group per position of every game: hundreds of thousands here, gigabytes on a big
    // database. Refused (not built whole first), naming the parameter.
    for format in ["json", "csv", "svg"] {
        let (status, msg) = server.error(&format!("/api/stats?by=game_id,ply&format={format}"));
        assert_eq!(status, 400, "{msg}");
        assert!(
            msg.starts_with("by=game_id,ply: these columns make more than 100,000 groups"),
            "{msg}"
        );
    }
    // The same question with fewer groups is answered.
    let rows = server.json("/api/stats?by=ply_bucket")["rows"]
        .as_array()
        .unwrap()
        .len();
    assert!(rows > 1, "{rows}");
    // The command line: the same refusal in its words (exit 2), above its own bound.
    let (code, out, err) = pawndex(&[
        "stats",
        "--db",
        &db,
        "--by",
        "game_id,ply",
        "--max-groups",
        "1000",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("--by game_id,ply: these columns make more than 1,000 groups"),
        "{err}"
    );
    let (code, _, err) = pawndex(&[
        "stats",
        "--db",
        &db,
        "--by",
        "ply_bucket",
        "--max-groups",
        "1000",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// `GET /api/player` answers byte for byte what `pawndex player … --format json` prints, each
/// parameter being the flag of the same name; an unknown name is a 404 with the command's
/// words, a bad colour or a missing name a 400, and `baseline` (a file of the server's
/// machine) is no parameter.
#[test]
fn a_players_profile_is_the_commands_document() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let cases: [(&str, &[&str]); 4] = [
        ("name=Kasparov,%20Garry", &["Kasparov, Garry"]),
        ("name=kasparov&as=black", &["kasparov", "--as", "black"]),
        (
            "name=Kasparov,%20Garry&vs=Karpov",
            &["Kasparov, Garry", "--vs", "Karpov"],
        ),
        (
            "name=Kasparov,%20Garry&year=1980..2000&exact=3",
            &["Kasparov, Garry", "--year", "1980..2000", "--exact", "3"],
        ),
    ];
    for (query, args) in cases {
        let mut cmd = vec!["player", "--db", &db, "--format", "json"];
        cmd.extend_from_slice(args);
        let (code, out, err) = pawndex(&cmd);
        assert_eq!(code, 0, "{cmd:?}: {err}");
        let r = server.get(&format!("/api/player?{query}"));
        assert_eq!(r.status, 200, "{query}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.text(), out, "{query}");
    }
    let (code, _, cli) = pawndex(&["player", "--db", &db, "Nobody, Here"]);
    assert_eq!(code, 1, "{cli}");
    let (status, msg) = server.error("/api/player?name=Nobody,%20Here");
    assert_eq!(status, 404, "{msg}");
    assert!(
        msg.contains("no player named \"Nobody, Here\""),
        "{msg} (the command says {cli})"
    );
    // The player filter of the games' list: the same look-up, the parameter named.
    let (status, msg) = server.error("/api/games?player_name=Nobody,%20Here");
    assert_eq!(status, 404, "{msg}");
    assert!(
        msg.starts_with("player_name: no player named \"Nobody, Here\""),
        "{msg}"
    );
    let (status, msg) = server.error("/api/player?name=kasparov&as=purple");
    assert_eq!(status, 400);
    assert!(msg.starts_with("as=purple: give white or black"), "{msg}");
    let (status, msg) = server.error("/api/player");
    assert_eq!(status, 400);
    assert!(msg.starts_with("give name="), "{msg}");
    let (status, msg) = server.error("/api/player?name=kasparov&baseline=other.db");
    assert_eq!(status, 400);
    assert!(msg.contains("unknown parameter \"baseline\""), "{msg}");
}

/// `GET /api/players` answers byte for byte what `pawndex players --format json` prints, with
/// `search`, `min_games` and `limit` as its options; a limit past 500 is a 400.
#[test]
fn the_players_search_is_the_commands_document() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let cases: [(&str, &[&str]); 4] = [
        ("", &[]),
        ("?search=kasparov", &["--search", "kasparov"]),
        ("?search=KASPAROV,%20g.", &["--search", "KASPAROV, g."]),
        (
            "?min_games=2&limit=3",
            &["--min-games", "2", "--limit", "3"],
        ),
    ];
    for (query, args) in cases {
        let mut cmd = vec!["players", "--db", &db, "--format", "json"];
        cmd.extend_from_slice(args);
        let (code, out, err) = pawndex(&cmd);
        assert_eq!(code, 0, "{cmd:?}: {err}");
        let r = server.get(&format!("/api/players{query}"));
        assert_eq!(r.status, 200, "{query}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.text(), out, "{query}");
    }
    let v = server.json("/api/players?search=kasparov");
    assert_eq!(v["players"][0]["player"], "Kasparov, Garry", "{v}");
    let (status, msg) = server.error("/api/players?limit=100000");
    assert_eq!(status, 400);
    assert!(
        msg.starts_with("limit=100000: give a whole number from 1 to 500"),
        "{msg}"
    );
}

/// One HTTP/1.1 POST of `body` to `path`, and its answer. The request is written on a thread
/// of its own while the answer is read, so that a server answering before it read the whole
/// body (a 413) is heard, not a broken pipe.
fn post(addr: &str, path: &str, body: &[u8]) -> Response {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/x-chess-pgn\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&req);
    });
    let mut raw = Vec::new();
    let read = s.read_to_end(&mut raw);
    let _ = writer.join();
    assert!(
        !raw.is_empty(),
        "POST {path}: no answer ({read:?}, {} bytes sent)",
        body.len()
    );
    parse_response(&raw)
}

/// A game "played last night" (not one of the sample's): a Queen's Gambit Exchange in the
/// Carlsbad from 6. e3 (ply 11), out of it for a ply at 21. bxc6 (41), back at 21...bxc6 (42),
/// left for good at 23. e4 (45); 50 plies.
const LAST_NIGHT: &str = "[Event \"Club night\"]\n[White \"Me\"]\n[Black \"Opponent\"]\n\
[Result \"1-0\"]\n\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6 6. e3 Be7 7. Bd3 \
Nbd7 8. Qc2 O-O 9. Nf3 Re8 10. O-O Nf8 11. Rab1 a5 12. a3 Ne4 13. Bxe7 Qxe7 14. b4 axb4 \
15. axb4 Bf5 16. Rfe1 Ng6 17. Nd2 Nxd2 18. Qxd2 Bxd3 19. Qxd3 Nh4 20. b5 Qg5 21. bxc6 bxc6 \
22. Rb7 Nf5 23. e4 dxe4 24. Nxe4 Qg6 25. Ng3 h5 1-0\n";

/// `POST /api/annotate` of `pgn`: a 200 JSON answer.
fn annotate_post(server: &Server, pgn: &str) -> Value {
    let r = post(&server.addr, "/api/annotate", pgn.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    serde_json::from_slice(&r.body).unwrap()
}

/// `pawndex annotate FILE --db DB` with more arguments: exit code, stdout, stderr.
fn annotate_cli(dir: &Path, db: &str, pgn: &str, more: &[&str]) -> (i32, String, String) {
    let file = dir.join("pasted.pgn");
    std::fs::write(&file, pgn).unwrap();
    let file = file.display().to_string();
    let mut args = vec!["annotate", file.as_str(), "--db", db];
    args.extend_from_slice(more);
    pawndex(&args)
}

#[test]
fn a_pasted_game_is_annotated_as_the_command_annotates_it() {
    let (dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let two = format!("{LAST_NIGHT}\n{ISOLANI_PGN}");
    let v = annotate_post(&server, &two);
    let games = v["games"].as_array().unwrap();
    let (code, out, err) = annotate_cli(dir.path(), &db, &two, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let cli = json_lines(&out);
    assert_eq!(games.len(), cli.len(), "one game per game of the text");
    assert_eq!(games.len(), 7);
    for (g, c) in games.iter().zip(&cli) {
        assert_eq!(&g["annotation"], c, "the object of annotate --format json");
    }
    // The annotated PGN: the command's (all the games, text between them kept).
    let (code, out, err) = annotate_cli(dir.path(), &db, &two, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["pgn"].as_str().unwrap(), out);
    let each: String = games
        .iter()
        .map(|g| g["pgn"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        each, out,
        "each game's annotated text, in order, is the file's"
    );
    assert_eq!(v["failed"], 0);
    // The board's plies: the game replayed, a FEN and a named structure per ply, and the
    // structure changes where the annotation's are.
    let first = &games[0];
    let plies = first["replay"]["plies"].as_array().unwrap();
    assert_eq!(plies.len(), 51, "50 half-moves and the start");
    assert_eq!(
        plies[0]["fen"],
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    );
    assert_eq!(plies[8]["san"], "exd5");
    assert!(plies[10]["structure"].is_null());
    assert_eq!(plies[11]["san"], "e3");
    assert_eq!(plies[11]["structure"]["key"], "carlsbad");
    let form = |p: &Value| {
        p["structure"]["key"]
            .as_str()
            .map(|k| (k.to_owned(), p["structure"]["reversed"].as_bool()))
    };
    let mut changes = Vec::new();
    for w in plies.windows(2) {
        if form(&w[0]) != form(&w[1]) {
            changes.push(w[1]["ply"].as_u64().unwrap());
        }
    }
    let noted: Vec<u64> = first["annotation"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ply"].as_u64().unwrap())
        .filter(|&p| p > 0)
        .collect();
    assert_eq!(changes, [11, 41, 42, 45]);
    assert_eq!(
        noted, changes,
        "the notes sit where the board's structure changes"
    );
}

#[test]
fn a_game_that_cannot_be_replayed_comes_back_with_its_reason() {
    let (dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    let bad = "[Event \"Broken\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n\n\
               1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. Ke3 *\n";
    let text = format!("{LAST_NIGHT}\n{bad}\n{LAST_NIGHT}");
    let v = annotate_post(&server, &text);
    let games = v["games"].as_array().unwrap();
    assert_eq!(games.len(), 3);
    assert_eq!(v["failed"], 1);
    let error = &games[1]["annotation"]["error"];
    assert_eq!(error["ply"], 9, "{error}");
    assert!(
        error["reason"].as_str().unwrap().contains("Ke3"),
        "the reason names the move: {error}"
    );
    assert!(games[1]["replay"].is_null());
    for g in [&games[0], &games[2]] {
        assert!(g["annotation"]["error"].is_null());
        assert!(!g["annotation"]["changes"].as_array().unwrap().is_empty());
    }
    // The command says the same of the same text (and exits 1).
    let (code, out, _) = annotate_cli(dir.path(), &db, &text, &["--format", "json"]);
    assert_eq!(code, 1);
    let cli = json_lines(&out);
    assert_eq!(games[1]["annotation"], cli[1]);
    // The broken game is written back unchanged.
    assert!(v["pgn"].as_str().unwrap().contains(bad.trim_end()));
}

#[test]
fn annotate_bounds_its_request_and_refuses_what_is_not_pgn() {
    let (_dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    // Above 1 MiB: a 413 saying the bound, before any work.
    let big = LAST_NIGHT.repeat((1 << 20) / LAST_NIGHT.len() + 1);
    assert!(big.len() > 1 << 20);
    let r = post(&server.addr, "/api/annotate", big.as_bytes());
    assert_eq!(r.status, 413, "{}", r.text());
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    let msg = v["error"].as_str().unwrap();
    assert!(
        msg.contains("1 MiB") && msg.contains("1048576 bytes"),
        "{msg}"
    );
    // At the bound (a game and blank lines): annotated.
    let at_bound = format!("{LAST_NIGHT}{}", "\n".repeat((1 << 20) - LAST_NIGHT.len()));
    assert_eq!(at_bound.len(), 1 << 20);
    let r = post(&server.addr, "/api/annotate", at_bound.as_bytes());
    assert_eq!(r.status, 200, "{}", &r.text()[..200.min(r.text().len())]);
    // More than 100 games (the answer holds each one's plies): a 400 in words.
    let many = "[Event \"x\"]\n\n1. e4 e5 *\n\n".repeat(101);
    let r = post(&server.addr, "/api/annotate", many.as_bytes());
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("more than 100 games"), "{}", r.text());
    let r = post(
        &server.addr,
        "/api/annotate",
        &many.as_bytes()[..many.len() / 101 * 100],
    );
    assert_eq!(r.status, 200, "{}", &r.text()[..200.min(r.text().len())]);
    // Empty, binary, compressed, an archive: a 400 in words.
    let mut gz = vec![0x1f, 0x8b, 8, 0];
    gz.extend_from_slice(&[0u8; 64]);
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend_from_slice(&[0u8; 64]);
    let binary: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 32) as u8).collect();
    for (body, words) in [
        (&b""[..], "no PGN text"),
        (&b"  \n\r\n "[..], "no PGN text"),
        (&binary[..], "not PGN text"),
        (&gz[..], "gzip-compressed"),
        (&zip[..], "archive"),
    ] {
        let r = post(&server.addr, "/api/annotate", body);
        assert_eq!(r.status, 400, "{words}: {}", r.text());
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert!(v["error"].as_str().unwrap().contains(words), "{v}");
    }
    // A GET: the route says how it is asked.
    let r = server.get("/api/annotate");
    assert_eq!(r.status, 405);
    assert!(r.text().contains("POST the PGN text"), "{}", r.text());
}

/// The files of a folder with their bytes.
fn folder_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn annotating_writes_nothing() {
    let (dir, db) = sample_db();
    let server = Server::start(&db, &[]);
    // The server's own files (a reader's) are there once it answered a first request.
    let _ = server.json("/api/info");
    let before = folder_bytes(dir.path());
    for _ in 0..3 {
        let v = annotate_post(&server, &format!("{LAST_NIGHT}\n{ISOLANI_PGN}"));
        assert_eq!(v["games"].as_array().unwrap().len(), 7);
    }
    let _ = server.json("/api/info");
    let after = folder_bytes(dir.path());
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&after),
        names(&before),
        "no new file beside the database"
    );
    for ((name, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "{name} changed");
    }
    // The games are not in the database.
    let info = server.json("/api/info");
    let (_, out, _) = pawndex(&["info", "--db", &db, "--format", "json"]);
    let cli: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["games"], cli["games"]);
    assert_eq!(cli["games"], 12);
}
