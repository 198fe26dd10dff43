//! `pawndex stats --chart`: SVG and PNG files are produced, are well formed, show the data
//! (they change when the data change), and SVG needs no font file.

mod common;

use std::io::Read;
use std::path::Path;

use common::stats::*;

/// Checks that `text` is well-formed XML with an `<svg>` root (tags nest and close, attribute
/// values are quoted), and returns the text content of its elements.
fn check_svg(text: &str) -> Vec<String> {
    let body = text.trim();
    assert!(
        body.starts_with("<svg"),
        "not an SVG: {}",
        &body[..body.len().min(80)]
    );
    assert!(body.ends_with("</svg>"), "unterminated SVG");
    let mut stack: Vec<String> = Vec::new();
    let mut texts = Vec::new();
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        let content = rest[..open].trim();
        if !content.is_empty() {
            assert!(!content.contains('>'), "stray '>' in text: {content}");
            texts.push(content.to_string());
        }
        let close = rest[open..].find('>').expect("unclosed tag") + open;
        let tag = &rest[open + 1..close];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
        } else if !tag.starts_with('?') && !tag.starts_with('!') {
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name = tag.split_whitespace().next().expect("empty tag");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in <{tag}>"
            );
            if !self_closing {
                stack.push(name.to_string());
            }
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    texts
}

/// CRC-32 (ISO-HDLC), as PNG chunks use it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Checks a PNG file chunk by chunk (lengths, CRCs, IHDR first, IEND last), inflates the
/// image data and returns (width, height, number of distinct colours sampled).
fn check_png(bytes: &[u8]) -> (u32, u32, usize) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut at = 8;
    let mut chunks = Vec::new();
    let mut idat = Vec::new();
    let (mut width, mut height, mut channels) = (0, 0, 0);
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(bytes[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(
            crc,
            crc32(&bytes[at + 4..at + 8 + len]),
            "CRC of {:?}",
            kind
        );
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap());
                height = u32::from_be_bytes(data[4..8].try_into().unwrap());
                assert_eq!(data[8], 8, "bit depth");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("colour type {t}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        chunks.push(String::from_utf8_lossy(kind).into_owned());
        at += 12 + len;
    }
    assert_eq!(chunks.first().map(String::as_str), Some("IHDR"));
    assert_eq!(chunks.last().map(String::as_str), Some("IEND"));
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("IDAT inflates");
    let stride = 1 + width as usize * channels;
    assert_eq!(raw.len(), stride * height as usize, "image data size");
    // Filter bytes are 0..=4; sample some pixel bytes for variety (not a blank image).
    let mut colours = std::collections::BTreeSet::new();
    for row in raw.chunks(stride) {
        assert!(row[0] <= 4, "filter type {}", row[0]);
        colours.insert(row[1..].iter().step_by(97).copied().collect::<Vec<u8>>());
    }
    (width, height, colours.len())
}

fn chart(db: &Path, out: &Path, args: &[&str]) {
    let mut all = args.to_vec();
    all.extend(["--chart", out.to_str().unwrap(), "-o"]);
    let csv = out.with_extension("csv");
    all.push(csv.to_str().unwrap());
    let result = stats(db, &all);
    assert!(
        result.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(out.exists(), "{all:?} drew nothing");
}

#[test]
fn svg_charts_are_well_formed_and_follow_the_data() {
    let small = index(&[root().join("examples/sample.pgn")]);
    let full = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    for (by, title) in [
        ("white_islands", "White's score by White's pawn islands"),
        (
            "phase,white_islands",
            "White's score by game phase and White's pawn islands",
        ),
        (
            "ply_bucket,pieceset",
            "White's score by ply (in tens) and piece-set",
        ),
        (
            "elo_band",
            "White's score by Elo band (mean of both players)",
        ),
    ] {
        let a = dir.path().join("a.svg");
        let b = dir.path().join("b.svg");
        let c = dir.path().join("c.svg");
        chart(&small.path, &a, &["--by", by]);
        chart(&full.path, &b, &["--by", by]);
        chart(
            &full.path,
            &c,
            &["--by", by, "--where", "white_bishop_pair = 1"],
        );
        let (a, b, c) = (
            std::fs::read_to_string(&a).unwrap(),
            std::fs::read_to_string(&b).unwrap(),
            std::fs::read_to_string(&c).unwrap(),
        );
        for svg in [&a, &b, &c] {
            let texts = check_svg(svg);
            assert!(
                texts
                    .iter()
                    .any(|t| t.contains(&title.replace('\'', "&apos;"))),
                "{by}: title"
            );
            for col in by.split(',') {
                assert!(
                    texts.iter().any(|t| t.contains(col)),
                    "{by}: axis {col} in {texts:?}"
                );
            }
        }
        assert_ne!(a, b, "{by}: more games, same chart");
        assert_ne!(b, c, "{by}: a filter, same chart");
        assert!(
            c.contains("where white_bishop_pair = 1"),
            "the filter is in the subtitle"
        );
    }
}

#[test]
fn png_charts_are_valid_images_and_follow_the_data() {
    let small = index(&[root().join("examples/sample.pgn")]);
    let full = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.png");
    let b = dir.path().join("b.png");
    chart(&small.path, &a, &["--by", "white_islands,black_islands"]);
    chart(&full.path, &b, &["--by", "white_islands,black_islands"]);
    let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    for png in [&a, &b] {
        let (w, h, colours) = check_png(png);
        assert_eq!((w, h), (1000, 700));
        assert!(
            colours > 50,
            "the image is nearly blank ({colours} row patterns)"
        );
    }
    assert_ne!(a, b, "more games, same image");
}

#[test]
fn every_report_draws_svg_and_png() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    for report in [
        "islands-vs-score",
        "bishop-pair-by-elo",
        "dispersion-by-phase",
        "distortion-by-phase",
        "phalanx-by-ply",
        "top-structures",
    ] {
        let svg = dir.path().join(format!("{report}.svg"));
        let png = dir.path().join(format!("{report}.png"));
        chart(&db.path, &svg, &["--report", report]);
        chart(&db.path, &png, &["--report", report, "--per", "game"]);
        let texts = check_svg(&std::fs::read_to_string(&svg).unwrap());
        assert!(texts.len() > 10, "{report}: {texts:?}");
        let (w, h, colours) = check_png(&std::fs::read(&png).unwrap());
        assert_eq!((w, h), (1000, 700), "{report}");
        assert!(colours > 50, "{report}: nearly blank");
    }
    // The structures chart names each structure by its pawn FEN.
    let texts = check_svg(&std::fs::read_to_string(dir.path().join("top-structures.svg")).unwrap());
    assert!(
        texts.iter().any(|t| t == "8/pppppppp/8/8/8/8/PPPPPPPP/8"),
        "{texts:?}"
    );
}

#[test]
fn svg_needs_no_font_file_and_png_says_what_it_needs() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let no_font = [("PAWNDEX_FONT", "/nonexistent/font.ttf")];
    let svg = dir.path().join("a.svg");
    let out = stats_env(
        &db.path,
        &[
            "--report",
            "islands-vs-score",
            "--chart",
            svg.to_str().unwrap(),
        ],
        &no_font,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_svg(&std::fs::read_to_string(&svg).unwrap());
    // The same SVG as with a font: text size never comes from the font.
    let again = dir.path().join("b.svg");
    chart(&db.path, &again, &["--report", "islands-vs-score"]);
    assert_eq!(std::fs::read(&svg).unwrap(), std::fs::read(&again).unwrap());

    let png = dir.path().join("a.png");
    let out = stats_env(
        &db.path,
        &["--by", "phase", "--chart", png.to_str().unwrap()],
        &no_font,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("PAWNDEX_FONT") && err.contains("SVG"), "{err}");
    assert!(!png.exists());
    assert!(
        out.stdout.is_empty(),
        "no CSV before the font is known to be there"
    );
}

#[test]
fn charts_are_reproducible_and_empty_results_still_draw() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.svg");
    let b = dir.path().join("b.svg");
    chart(&db.path, &a, &["--report", "dispersion-by-phase"]);
    chart(&db.path, &b, &["--report", "dispersion-by-phase"]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());

    let empty = dir.path().join("empty.svg");
    chart(
        &db.path,
        &empty,
        &["--by", "phase", "--where", "ply > 100000"],
    );
    let texts = check_svg(&std::fs::read_to_string(&empty).unwrap());
    assert!(
        texts.iter().any(|t| t == "No positions matched"),
        "{texts:?}"
    );
    let png = dir.path().join("empty.png");
    chart(
        &db.path,
        &png,
        &["--by", "phase", "--where", "ply > 100000"],
    );
    check_png(&std::fs::read(&png).unwrap());
}

/// The bars of a one-column chart: one visible bar per row of the CSV, taller for more units.
#[test]
fn one_column_charts_draw_a_bar_per_group() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    for by in ["white_islands", "ply", "elo_band", "pawn_fen"] {
        let svg = dir.path().join(format!("{by}.svg"));
        chart(&db.path, &svg, &["--by", by]);
        let text = std::fs::read_to_string(&svg).unwrap();
        let csv = parse_csv(&std::fs::read(svg.with_extension("csv")).unwrap());
        // Bars are the rectangles filled with the first series colour, left to right.
        let mut bars: Vec<(i64, i64, i64)> = text
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains("fill=\"#1F77B4\""))
            .map(|l| {
                let attr = |name: &str| -> i64 {
                    let at = l.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                    l[at..].split('"').next().unwrap().parse().unwrap()
                };
                (attr("x"), attr("width"), attr("height"))
            })
            .collect();
        bars.sort();
        assert_eq!(bars.len(), csv.rows.len(), "--by {by}: one bar per row");
        assert!(
            bars.iter().all(|&(_, w, h)| w >= 1 && h >= 1),
            "--by {by}: {bars:?}"
        );
        // Heights follow the positions column.
        let units: Vec<u64> = csv.rows.iter().map(|r| r[1].parse().unwrap()).collect();
        for i in 0..units.len() {
            for j in 0..units.len() {
                if units[i] > units[j] * 11 / 10 + 1 {
                    assert!(bars[i].2 > bars[j].2, "--by {by}: bar {i} vs {j}");
                }
            }
        }
    }
}

/// A PGN game for the chart tests: `moves` (SAN, numbered here), Elos when given, a distinct
/// round so that no two games are duplicates.
fn game(round: usize, elo: Option<u32>, moves: &[&str], result: &str) -> String {
    let elos = elo.map_or(String::new(), |e| {
        format!("[WhiteElo \"{e}\"]\n[BlackElo \"{e}\"]\n")
    });
    let mut text = String::new();
    for (i, m) in moves.iter().enumerate() {
        if i % 2 == 0 {
            text.push_str(&format!("{}. ", i / 2 + 1));
        }
        text.push_str(m);
        text.push(' ');
    }
    format!(
        "[Event \"charts\"]\n[Site \"?\"]\n[Date \"2024.01.01\"]\n[Round \"{round}\"]\n\
         [White \"W\"]\n[Black \"B\"]\n[Result \"{result}\"]\n{elos}\n{text}{result}\n\n"
    )
}

/// Indexes `pgn` (written to a temporary file).
fn index_pgn(pgn: &str) -> Db {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("charts.pgn");
    std::fs::write(&path, pgn).unwrap();
    index(&[path])
}

/// The SVG `<polyline>`s drawn in `color` with stroke width 2 (the data lines), each as its
/// list of points.
fn data_lines(svg: &str, color: &str) -> Vec<Vec<String>> {
    svg.lines()
        .filter(|l| {
            l.starts_with("<polyline")
                && l.contains(&format!("stroke=\"{color}\""))
                && l.contains("stroke-width=\"2\"")
        })
        .map(|l| {
            let at = l.find("points=\"").unwrap() + 8;
            l[at..]
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .map(String::from)
                .collect()
        })
        .collect()
}

/// Elo bands "none", 1700, 1900 and 2000 (no 1800), 30 games each so every score is drawn.
fn elo_gap_db() -> Db {
    let moves = ["e4", "e5", "Nf3", "Nc6"];
    let mut pgn = String::new();
    for (b, elo) in [None, Some(1750), Some(1950), Some(2050)]
        .into_iter()
        .enumerate()
    {
        for i in 0..30 {
            let result = ["1-0", "0-1", "1/2-1/2"][(i + b) % 3];
            pgn.push_str(&game(b * 100 + i, elo, &moves, result));
        }
    }
    index_pgn(&pgn)
}

/// The score line breaks where the category axis has a gap: from "none" to 1700, and from
/// 1700 to 1900 (no 1800); 1900 to 2000 stays joined. Every point keeps its dot.
#[test]
fn lines_break_at_gaps_in_the_categories() {
    let db = elo_gap_db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("elo.svg");
    chart(&db.path, &svg, &["--by", "elo_band"]);
    let csv = parse_csv(&std::fs::read(svg.with_extension("csv")).unwrap());
    let bands: Vec<&str> = csv.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(bands, ["", "1700", "1900", "2000"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let lines = data_lines(&text, "#D62728");
    assert_eq!(lines.len(), 1, "only 1900-2000 is joined: {lines:?}");
    assert_eq!(lines[0].len(), 2, "{lines:?}");
    let dots = text
        .lines()
        .filter(|l| l.starts_with("<circle") && l.contains("fill=\"#D62728\""))
        .count();
    assert_eq!(dots, 4, "a dot on every score");
}

/// A two-column chart breaks its lines the same way.
#[test]
fn series_lines_break_at_gaps_too() {
    let db = elo_gap_db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("series.svg");
    chart(&db.path, &svg, &["--by", "phase,elo_band"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    // One series (every position is in the opening): joined only from 1900 to 2000, above
    // (shares) and below (scores).
    let lines = data_lines(&text, "#1F77B4");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l.len() == 2), "{lines:?}");
}

/// Heat-map cells without data are filled, and the legend says what that fill means.
#[test]
fn heat_map_cells_without_data_are_in_the_legend() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("islands.svg");
    chart(&db.path, &svg, &["--report", "islands-vs-score"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = check_svg(&text);
    assert!(texts.iter().any(|t| t == "no data"), "{texts:?}");
    let csv = parse_csv(&std::fs::read(svg.with_extension("csv")).unwrap());
    let distinct = |k: usize| {
        csv.rows
            .iter()
            .map(|r| r[k].clone())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    let empty = distinct(0) * distinct(1) - csv.rows.len();
    assert!(empty > 0, "the fixtures leave some island pairs empty");
    let grey = text
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains("fill=\"#969696\""))
        .count();
    // Each empty cell, and the legend's swatch.
    assert_eq!(grey, empty + 1);
}

/// `--by ply` ends the x axis just after the last ply that shows anything, not at the last
/// ply of the longest game, and says what it left out.
#[test]
fn the_ply_axis_ends_with_the_visible_data() {
    let short = ["Nf3", "Nf6", "Ng1", "Ng8"].repeat(5);
    let long = ["Nf3", "Nf6", "Ng1", "Ng8"].repeat(75);
    let mut pgn = String::new();
    for i in 0..600 {
        pgn.push_str(&game(i, None, &short, "1/2-1/2"));
    }
    pgn.push_str(&game(600, None, &long, "1-0"));
    let db = index_pgn(&pgn);
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("ply.svg");
    chart(&db.path, &svg, &["--by", "ply"]);
    let csv = parse_csv(&std::fs::read(svg.with_extension("csv")).unwrap());
    assert_eq!(
        csv.rows.last().unwrap()[0],
        "300",
        "the CSV keeps every ply"
    );
    let texts = check_svg(&std::fs::read_to_string(&svg).unwrap());
    let ticks: Vec<u32> = texts.iter().filter_map(|t| t.parse().ok()).collect();
    // Ply labels are under both panels; the counts' labels only once.
    let last = ticks
        .iter()
        .copied()
        .filter(|t| ticks.iter().filter(|u| *u == t).count() == 2)
        .max()
        .unwrap();
    assert!(
        (20..=25).contains(&last),
        "last ply label {last}: {ticks:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("not drawn: 279 more values of ply up to 300")),
        "{texts:?}"
    );
}

/// `pawndex ARGS...` (any command).
fn pawndex(args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::BIN)
        .args(args)
        .output()
        .unwrap()
}

/// An output path in a missing folder (or naming a folder) is refused before any work: exit
/// 1, nothing on stdout, the path in words on stderr, no Rust error structure.
#[test]
fn an_output_path_in_a_missing_folder_is_refused_before_any_work() {
    let db = fixture_db();
    let d = db.path.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("x/missing/dir");
    let folder = dir.path().join("folder.svg");
    std::fs::create_dir(&folder).unwrap();
    let in_missing = |name: &str| missing.join(name).to_str().unwrap().to_string();
    let (svg, png, csv) = (
        in_missing("c.svg"),
        in_missing("c.png"),
        in_missing("c.csv"),
    );
    let folder = folder.to_str().unwrap();
    let missing_words = format!("the folder {} does not exist", missing.display());
    let is_folder = format!("{folder} is a folder");
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec![
                "stats",
                "--db",
                d,
                "--report",
                "islands-vs-score",
                "--chart",
                &svg,
            ],
            &svg,
            &missing_words,
        ),
        (
            vec!["stats", "--db", d, "--by", "phase", "--chart", &png],
            &png,
            &missing_words,
        ),
        (
            vec!["stats", "--db", d, "--by", "phase", "-o", &csv],
            &csv,
            &missing_words,
        ),
        (
            vec!["stats", "--db", d, "--by", "phase", "--chart", folder],
            folder,
            &is_folder,
        ),
        (
            vec!["structures", "--db", d, "--chart", &svg],
            &svg,
            &missing_words,
        ),
        (
            vec!["structures", "--db", d, "--chart", folder],
            folder,
            &is_folder,
        ),
    ];
    for (args, path, words) in cases {
        let out = pawndex(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: work was done before the check"
        );
        assert!(err.contains(path) && err.contains(words), "{args:?}: {err}");
        assert!(
            !err.contains("ImageError") && !err.contains("Os {") && !err.contains("backend"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!dir.path().join("x").exists());
}

/// A path in a folder nobody can write in (`/proc`, even for root) is refused before any work,
/// in words.
#[cfg(target_os = "linux")]
#[test]
fn an_output_path_in_a_folder_that_cannot_be_written_is_refused_before_any_work() {
    let db = fixture_db();
    let d = db.path.to_str().unwrap();
    for args in [
        vec![
            "stats",
            "--db",
            d,
            "--report",
            "islands-vs-score",
            "--chart",
            "/proc/pawndex-c.svg",
        ],
        vec![
            "stats",
            "--db",
            d,
            "--by",
            "phase",
            "-o",
            "/proc/pawndex-c.csv",
        ],
        vec!["structures", "--db", d, "--chart", "/proc/pawndex-c.png"],
    ] {
        let out = pawndex(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: work was done before the check"
        );
        assert!(
            err.contains("cannot write in the folder /proc") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// A chart or CSV whose write fails after the work (here a full device) says so in words (the
/// CSV said "writing PATH" only), and a file that was there before (here a link to
/// `/dev/full`) is not removed.
#[cfg(target_os = "linux")]
#[test]
fn a_chart_or_csv_that_cannot_be_written_says_why_and_keeps_what_was_there() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    for (name, option, what) in [
        ("full.svg", "--chart", "chart"),
        ("full.png", "--chart", "chart"),
        ("full.csv", "-o", "CSV"),
    ] {
        let path = dir.path().join(name);
        std::os::unix::fs::symlink("/dev/full", &path).unwrap();
        let out = stats(&db.path, &["--by", "phase", option, path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "cannot write the {what} {}: No space left on device",
                path.display()
            )),
            "{err}"
        );
        assert!(
            !err.contains("ImageError") && !err.contains("Os {") && !err.contains("backend"),
            "{err}"
        );
        assert!(
            path.symlink_metadata().is_ok(),
            "the link that was there is kept"
        );
    }
}

/// The `(x, y, width, height)` of every `<rect>` of `svg` whose attributes contain `needle`.
fn rects(svg: &str, needle: &str) -> Vec<(f64, f64, f64, f64)> {
    let attr = |l: &str, name: &str| -> f64 {
        let at = l.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        l[at..].split('"').next().unwrap().parse().unwrap()
    };
    svg.lines()
        .filter(|l| l.starts_with("<rect") && l.contains(needle))
        .map(|l| {
            (
                attr(l, "x"),
                attr(l, "y"),
                attr(l, "width"),
                attr(l, "height"),
            )
        })
        .collect()
}

/// A heat map with one row (issue 37: every cell was drawn 0 pixels high, the labels piled on
/// the top edge): each cell is as high as the plot, and the row is labelled.
#[test]
fn a_heat_map_with_one_row_fills_its_cells() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("one-row.svg");
    chart(
        &db.path,
        &svg,
        &[
            "--report",
            "islands-vs-score",
            "--where",
            "white_islands = 2",
        ],
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = check_svg(&text);
    let csv = parse_csv(&std::fs::read(svg.with_extension("csv")).unwrap());
    assert!(csv.rows.len() >= 2, "{:?}", csv.rows);
    assert!(csv.rows.iter().all(|r| r[0] == "2"), "{:?}", csv.rows);
    assert!(
        !text.contains("height=\"0\""),
        "a rectangle 0 pixels high:\n{text}"
    );
    // The cells: every rectangle wider than a legend swatch and under the full picture.
    let cells: Vec<_> = rects(&text, "fill=")
        .into_iter()
        .filter(|r| r.2 > 20.0 && r.2 < 900.0 && r.3 > 20.0)
        .collect();
    assert_eq!(cells.len(), csv.rows.len(), "one cell per group: {cells:?}");
    assert!(
        cells.iter().all(|c| c.3 > 300.0),
        "each cell fills the one row: {cells:?}"
    );
    assert!(texts.iter().any(|t| t == "2"), "the row's label: {texts:?}");
}

/// `--by structure` names categories with no order between them: no line joins them (issue
/// 37), and each drawn form is a labelled bar, the most common first.
#[test]
fn named_structures_are_bars_without_a_line() {
    let db = fixture_db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("structures.svg");
    chart(&db.path, &svg, &["--by", "structure"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = check_svg(&text);
    let polylines = text
        .lines()
        .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
        .count();
    assert_eq!(polylines, 0, "no line between named structures");
    let csv = parse_csv(&std::fs::read(svg.with_extension("csv")).unwrap());
    let mut rows: Vec<(u64, String)> = csv
        .rows
        .iter()
        .map(|r| (r[1].parse().unwrap(), r[0].clone()))
        .collect();
    assert!(rows.len() >= 3, "{rows:?}");
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let labels: Vec<&String> = texts
        .iter()
        .filter(|t| rows.iter().any(|(_, k)| k == *t))
        .collect();
    assert_eq!(
        labels.len(),
        rows.len().min(25),
        "a label per drawn form: {texts:?}"
    );
    // Drawn from the top: the most common form's label comes first in the file order of rows
    // laid out top down; its count is the largest.
    let first = labels.iter().position(|l| **l == rows[0].1);
    assert!(first.is_some(), "{labels:?}");
}

/// The legend of a series chart covers no data point (issue 37: it covered the 2600 peak of
/// the bishop-pair report). Here the one series' share is the same in every band, so its
/// points run along the top of the upper panel, under the top right corner too.
#[test]
fn the_series_legend_covers_no_point() {
    let db = elo_gap_db();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("series.svg");
    chart(&db.path, &svg, &["--by", "phase,elo_band"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let boxes = rects(&text, "opacity=\"0.85\"");
    assert_eq!(boxes.len(), 1, "one legend box: {boxes:?}");
    let (x, y, w, h) = boxes[0];
    let attr = |l: &str, name: &str| -> f64 {
        let at = l.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        l[at..].split('"').next().unwrap().parse().unwrap()
    };
    let points: Vec<(f64, f64)> = text
        .lines()
        .filter(|l| l.starts_with("<circle"))
        .map(|l| (attr(l, "cx"), attr(l, "cy")))
        .collect();
    assert!(points.len() >= 4, "{points:?}");
    let under: Vec<_> = points
        .iter()
        .filter(|(cx, cy)| {
            (x - 4.0..=x + w + 4.0).contains(cx) && (y - 4.0..=y + h + 4.0).contains(cy)
        })
        .collect();
    assert!(
        under.is_empty(),
        "points under the legend {boxes:?}: {under:?}"
    );
}
