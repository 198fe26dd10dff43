//! `pawndex similar … --sql`: the ranking of `pawndex similar` as ONE plain SQLite statement
//! (no extension, no temporary table), for those who want to run, read or change it themselves
//! (`sqlite3 pawndex.db < similar.sql`).
//!
//! The target is baked into the statement. For each form of the target the options allow
//! ([`Options::variants`]), each side and each pair of files (a–b, c–d, e–f, g–h), a blob literal
//! of 4,100 bytes is the cost table of the pair: the byte at `1 + key` (the key: the side's pawns
//! on ranks 2 to 7 of the two files, shifted and masked in one step, modulo 4,100, which tells
//! the 4,096 ways apart in three operations; no stored set has a pawn on rank 1 or 8) is
//! `BIAS` (1) + the weighted cost `Σ file_weight(file) · file_cost(pawns, target, file)` of the
//! two files, computed here with the library's own functions, so the statement's distance is
//! exactly [`crate::model::similar::distance`] (doubled pawns included). A pair whose costs do not fit
//! in a byte (only a target with very many pawns on two files) is looked up file by file
//! (66-byte tables). The statement then:
//!
//! 1. `sets`: gives each pawn set its part of the distance for each form (`p0`, `p1`, …; four
//!    lookups per form); with `--max-distance D`, only for the sets whose centre pairs' costs
//!    are within `D` for some form (a part is at least any prefix of its lookups);
//! 2. `best`, `cand`: with `--max-distance D`, keeps the sets whose least part plus the other
//!    side's best part is within `D` (a pair of other sets cannot be within `D`);
//! 3. `hits`: reads every run whose two sets are candidates (every run without a bound);
//! 4. `per_game`, `pairs`: counts positions (plies), games and White's results per structure,
//!    a game once per structure, and gives it its distance (the least over the forms of White's
//!    part plus Black's part), within `D` when given;
//! 5. `ranked` and the final `SELECT`: orders as the command does (distance, games descending,
//!    White pawns, Black pawns), applies `--min-games` and `--limit`, and writes the structure as
//!    a FEN board part and White's score with one decimal, rounded as the command rounds (half
//!    to even, in whole numbers).
//!
//! The `differs` column of the command is not in the statement.

use std::fmt::Write as _;

use crate::model::similar::{Options, Pawns, file_cost, file_weight};

/// A cost's byte in the cost tables is `BIAS +` the cost (`unicode()` reads no NUL byte).
const BIAS: u32 = 1;
/// The largest cost a table byte holds (bytes stay ASCII, which `unicode()` reads as is).
const MAX_COST: u32 = 127 - BIAS;

/// The squares of ranks 2 to 7 of a group of files (one file, or a pair) at the a-file, after
/// the pawns are shifted right by `8 + file`.
fn group_mask(width: u32) -> u64 {
    let file_bits = (1u64 << width) - 1;
    (0..6).fold(0, |m, rank| m | file_bits << (8 * rank))
}

/// The modulus that tells apart every placement of pawns on a group of files (the least that
/// does, found by trying: 66 for one file's 64, 4,100 for a pair's 4,096).
fn modulus(width: u32) -> u64 {
    if width == 1 { 66 } else { 4100 }
}

/// The slot in a group's cost table of the pawns `bb` (a bitboard): their squares on the
/// group's files, shifted and masked, modulo [`modulus`], as [`key`] computes it in SQL.
fn slot(bb: u64, file: u32, width: u32) -> usize {
    usize::try_from((bb >> (8 + file) & group_mask(width)) % modulus(width)).unwrap_or(0)
}

/// The SQL expression of the key of a group of files starting at `file` (one file, or the
/// pair `file`, `file + 1`) in the integer column `col` (see [`slot`]: three operations per
/// set instead of a shift and a mask per rank). Pawns never stand on ranks 1 and 8 in a
/// stored set, so the value is never negative.
fn key(col: &str, file: u32, width: u32) -> String {
    format!(
        "({col} >> {} & {}) % {}",
        8 + file,
        group_mask(width),
        modulus(width)
    )
}

/// The pawns of one side on the files `file..file + width` for a group key.
fn key_pawns(key: u32, file: u32, width: u32) -> u64 {
    let mut bb = 0u64;
    for rank in 1..7u32 {
        for i in 0..width {
            if key >> (width * (rank - 1) + i) & 1 == 1 {
                bb |= 1 << (8 * rank + file + i);
            }
        }
    }
    bb
}

/// The cost table of a group of files against one side's target pawns, as the bytes of a
/// blob literal (see the module doc); `None` when a cost does not fit in a byte.
fn cost_table(target: u64, file: u32, width: u32, ignore_wings: bool) -> Option<String> {
    // Slots no placement of pawns reaches are never looked up.
    let mut bytes = vec![BIAS; usize::try_from(modulus(width)).unwrap_or(0)];
    for k in 0..(1u32 << (6 * width)) {
        let bb = key_pawns(k, file, width);
        let cost: u32 = (file..file + width)
            .map(|f| file_weight(f, ignore_wings) * file_cost(bb, target, f))
            .sum();
        let cost = if bb.count_ones() > 8 {
            // No side has more than 8 pawns: never looked up.
            cost.min(MAX_COST)
        } else if cost > MAX_COST {
            return None;
        } else {
            cost
        };
        bytes[slot(bb, file, width)] = BIAS + cost;
    }
    let mut out = String::with_capacity(2 * bytes.len());
    for b in bytes {
        let _ = write!(out, "{b:02X}");
    }
    Some(out)
}

/// The lookup of one group's cost: `unicode(substr(X'…', 1 + key, 1))` (the byte, biased).
fn lookup(table: &str, file: u32, width: u32) -> String {
    format!(
        "unicode(substr(X'{table}', 1 + {}, 1))",
        key("pawns", file, width)
    )
}

/// The lookups of one side's part of the distance to `target` (that side's pawns of one
/// form), reading the pawns from the column `pawns`: one per pair of files (per file when a
/// pair's costs do not fit in bytes), the centre pairs first, the files of weight 0 left out.
fn terms(target: u64, ignore_wings: bool) -> Vec<String> {
    let mut terms = Vec::new();
    for file in [2u32, 4, 0, 6] {
        let weighed = (file..file + 2).any(|f| file_weight(f, ignore_wings) != 0);
        if !weighed {
            continue;
        }
        if let Some(table) = cost_table(target, file, 2, ignore_wings) {
            terms.push(lookup(&table, file, 2));
        } else {
            for f in file..file + 2 {
                if file_weight(f, ignore_wings) != 0 {
                    // A file's cost is at most 2 · (6 · 7 + 2 · 4) = 100 against any target.
                    let table = cost_table(target, f, 1, ignore_wings).unwrap_or_default();
                    terms.push(lookup(&table, f, 1));
                }
            }
        }
    }
    terms
}

/// The sum of the first `n` lookups, unbiased.
fn sum(terms: &[String], n: usize) -> String {
    let n = n.min(terms.len());
    if n == 0 {
        return "0".into();
    }
    format!(
        "{}\n      - {}",
        terms[..n].join("\n      + "),
        BIAS * n as u32
    )
}

/// The SQL expression of one side's part of the distance to `target` (see [`terms`]).
fn part(target: u64, ignore_wings: bool) -> String {
    let t = terms(target, ignore_wings);
    sum(&t, t.len())
}

/// A condition that holds for every set whose part for some form is at most `bound`, and
/// fails for most others at the first lookup: per form, the centre pairs' costs (a part's
/// first lookups) are at most the bound.
fn prefilter(targets: &[u64], ignore_wings: bool, bound: u32) -> String {
    let per_form: Vec<String> = targets
        .iter()
        .map(|&t| {
            let t = terms(t, ignore_wings);
            let prefix: Vec<String> = (1..=t.len().min(2))
                .map(|n| format!("{} <= {bound}", sum(&t, n)))
                .collect();
            if prefix.is_empty() {
                "1".into()
            } else {
                format!("({})", prefix.join("\n      AND "))
            }
        })
        .collect();
    per_form.join("\n    OR ")
}

/// `min(a, b, …)` of SQL expressions (SQLite's `min` with one argument is the aggregate).
fn least(exprs: &[String]) -> String {
    if exprs.len() == 1 {
        exprs[0].clone()
    } else {
        format!("min({})", exprs.join(", "))
    }
}

/// The SQL expression of the pawns-only FEN board part ("8/pp3ppp/…") of the integer columns
/// `w` and `b`: one character per square ('P', 'p' or '1'), then runs of '1' become counts.
fn board(w: &str, b: &str) -> String {
    let mut ranks = Vec::new();
    for rank in (0..8u32).rev() {
        let squares: Vec<String> = (0..8u32)
            .map(|file| {
                let sq = rank * 8 + file;
                format!("substr('1Pp', 1 + ({w} >> {sq} & 1) + 2 * ({b} >> {sq} & 1), 1)")
            })
            .collect();
        ranks.push(squares.join(" || "));
    }
    let mut expr = ranks.join("\n    || '/' || ");
    for n in (2..=8).rev() {
        expr = format!("replace({expr},\n    '{}', '{n}')", "1".repeat(n));
    }
    expr
}

/// The statement (see the module doc) that returns the rows `pawndex similar` lists for
/// `target` with these options: columns `distance`, `structure`, `positions`, `games`,
/// `white_score` (text with one decimal, NULL without a game with a result).
#[must_use]
pub fn statement(
    target: Pawns,
    options: Options,
    limit: usize,
    max_distance: Option<u32>,
    min_games: u64,
) -> String {
    let forms: Vec<Pawns> = options
        .variants()
        .into_iter()
        .map(|v| v.apply(target))
        .collect();
    let p: Vec<String> = (0..forms.len()).map(|k| format!("p{k}")).collect();
    let flag = |on: bool, name: &str| {
        if on {
            format!(" {name}")
        } else {
            String::new()
        }
    };
    // SQLite's integers stop at i64::MAX (a larger literal is a real number, which `LIMIT`
    // refuses); no table holds that many rows, so the largest is the same as any larger.
    let sql_limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let sql_min_games = i64::try_from(min_games).unwrap_or(i64::MAX);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "-- pawndex similar (White {}, Black {}){}{}{} --limit {limit}{} --min-games {min_games}\n\
         -- The rows of the command without `differs`; plain SQLite (see docs/similar.md, \
         \"The same in SQL\").\nWITH",
        crate::model::similar::square_list(target.white),
        crate::model::similar::square_list(target.black),
        flag(options.ignore_wings, "--ignore-wings"),
        flag(options.mirror, "--mirror"),
        flag(options.colour_reversed, "--colour-reversed"),
        max_distance.map_or(String::new(), |d| format!(" --max-distance {d}")),
    );
    sets_cte(&mut s, &forms, &p, options.ignore_wings, max_distance);
    let pair = least(
        &p.iter()
            .map(|x| format!("w.{x} + b.{x}"))
            .collect::<Vec<_>>(),
    );
    candidates_cte(&mut s, &p, max_distance);
    counts_cte(&mut s, &pair, sql_min_games, max_distance);
    ranked_select(&mut s, sql_limit);
    s
}

/// 1. The `sets` CTE: each pawn set's part of the distance for each form of the target.
fn sets_cte(
    s: &mut String,
    forms: &[Pawns],
    p: &[String],
    ignore_wings: bool,
    max_distance: Option<u32>,
) {
    // 1. The parts of each set.
    s.push_str(
        "-- 1. Each pawn set's part of the distance for each form of the target (p0: the target; \
         then its mirror\n--    image, colour-reversed forms): per pair of files, the pawns on \
         ranks 2 to 7 of the two files as\n--    12 bits pick one byte of the pair's cost table; \
         the byte is 1 + the weighted cost.\n",
    );
    let _ = writeln!(
        s,
        "sets(id, side, pawns, {}) AS MATERIALIZED (",
        p.join(", ")
    );
    for (side, name) in [(0u8, "White"), (1, "Black")] {
        if side == 1 {
            s.push_str("  UNION ALL\n");
        }
        let _ = writeln!(s, "  -- {name}'s sets");
        s.push_str("  SELECT id, side, pawns");
        for f in forms {
            let t = if side == 0 { f.white } else { f.black };
            let _ = write!(s, ",\n      {}", part(t, ignore_wings));
        }
        let _ = write!(s, "\n  FROM pawn_sets WHERE side = {side}");
        if let Some(d) = max_distance {
            let targets: Vec<u64> = forms
                .iter()
                .map(|f| if side == 0 { f.white } else { f.black })
                .collect();
            let _ = write!(
                s,
                "\n    -- only sets that can be within --max-distance: the centre's part first\n    \
                 AND ({})",
                prefilter(&targets, ignore_wings, d)
            );
        }
        s.push('\n');
    }
    s.push_str("),\n");
}

/// 2 and 3. The candidate sets and the runs of their pairs.
fn candidates_cte(s: &mut String, p: &[String], max_distance: Option<u32>) {
    let least_part = least(p);
    // 2 and 3. Candidates and their runs.
    match max_distance {
        Some(d) => {
            let least_s = least(&p.iter().map(|x| format!("s.{x}")).collect::<Vec<_>>());
            let _ = write!(
                *s,
                "-- 2. Each side's best part (of the sets within {d}: the best if any is), and the sets \
                 that can be in a pair\n--    within --max-distance: their least part plus the \
                 other side's best part is at most {d}.\n\
                 best(side, part) AS (SELECT side, min({least_part}) FROM sets GROUP BY side),\n\
                 cand AS MATERIALIZED (\n  SELECT s.* FROM sets AS s \
                 JOIN best AS o ON o.side = 1 - s.side\n  WHERE {least_s} + o.part <= {d}\n),\n\
                 -- 3. The runs whose two sets are candidates (one pass over `runs`; joined, \
                 not `IN`, so that SQLite\n--    checks each run against a Bloom filter of the \
                 candidates before it looks one up).\n\
                 hits AS (\n  SELECT r.game_id, r.white_set, r.black_set, r.last_ply - \
                 r.first_ply + 1 AS plies\n  FROM runs AS r\n  \
                 JOIN cand AS w ON w.id = r.white_set AND +w.side = 0\n  \
                 JOIN cand AS b ON b.id = r.black_set AND +b.side = 1\n),\n"
            );
        }
        None => {
            s.push_str(
                "-- 2, 3. Without --max-distance every set is a candidate: every run is read.\n\
                 cand AS (SELECT * FROM sets),\n\
                 hits AS (\n  SELECT game_id, white_set, black_set, last_ply - first_ply + 1 AS \
                 plies FROM runs\n),\n",
            );
        }
    }
}

/// 4. The counts per structure: positions, games, White's points and its distance.
fn counts_cte(s: &mut String, pair: &str, sql_min_games: i64, max_distance: Option<u32>) {
    // 4. Counts.
    let result_points =
        "CASE g.result WHEN '1-0' THEN 2 WHEN '1/2-1/2' THEN 1 WHEN '0-1' THEN 0 END";
    let _ = write!(
        *s,
        "-- 4. Per structure and game its plies; then per structure its positions, games (a game \
         once), White's\n--    points (a win 2, a draw 1) and games with a result, and its \
         distance: the least over the forms\n--    of White's part plus Black's part.\n\
         per_game AS (\n  SELECT white_set, black_set, game_id, sum(plies) AS plies\n  \
         FROM hits GROUP BY white_set, black_set, game_id\n),\n\
         pairs AS (\n  SELECT {pair} AS distance, w.pawns AS white_pawns, b.pawns AS black_pawns,\n\
         \x20        q.positions, q.games, q.points, q.scored\n  FROM (\n    \
         SELECT p.white_set, p.black_set, sum(p.plies) AS positions, count(*) AS games,\n      \
         sum({result_points}) AS points,\n      \
         count({result_points}) AS scored\n    \
         FROM per_game AS p JOIN games AS g ON g.id = p.game_id\n    \
         GROUP BY p.white_set, p.black_set\n    HAVING count(*) >= {sql_min_games}\n  ) AS q\n  \
         JOIN cand AS w ON w.id = q.white_set\n  JOIN cand AS b ON b.id = q.black_set{}\n),\n",
        max_distance.map_or(String::new(), |d| format!("\n  WHERE {pair} <= {d}")),
    );
}

/// 5. The command's order and `--limit`, and the output columns.
fn ranked_select(s: &mut String, sql_limit: i64) {
    // 5. Ranking and output.
    let _ = write!(
        *s,
        "-- 5. The command's order and --limit; White's score in tenths of a percent, with the \
         remainder.\n\
         ranked AS (\n  SELECT *, (500 * points) / scored AS tenths, (500 * points) % scored AS \
         rest\n  FROM pairs\n  ORDER BY distance, games DESC, white_pawns, black_pawns\n  \
         LIMIT {sql_limit}\n)\n"
    );
    let _ = write!(
        *s,
        "-- The structure as a FEN board part; White's score in percent with one decimal, \
         rounded half to even.\n\
         SELECT distance,\n  {} AS structure,\n  positions, games,\n  \
         {} AS white_score\n\
         FROM ranked\nORDER BY distance, games DESC, white_pawns, black_pawns;\n",
        board("white_pawns", "black_pawns"),
        score("tenths", "rest", "scored"),
    );
}

/// The SQL expression of White's score as the command writes it (percent, one decimal, the
/// exact value rounded half to even, as Rust's `{:.1}` rounds `50 · points / scored`), from
/// `tenths = 500 · points / scored` and `rest = 500 · points % scored` (whole numbers); NULL
/// when `scored` is 0.
fn score(tenths: &str, rest: &str, scored: &str) -> String {
    let rounded = format!(
        "({tenths} + (2 * {rest} > {scored} OR (2 * {rest} = {scored} AND {tenths} % 2 = 1)))"
    );
    format!("CASE WHEN {scored} > 0 THEN ({rounded} / 10) || '.' || ({rounded} % 10) END")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_extension_and_one_statement() {
        let carlsbad = Pawns {
            white: 0x0000_0000_0810_E300,
            black: 0x00E3_0408_0000_0000,
        };
        let all = Options {
            ignore_wings: true,
            mirror: true,
            colour_reversed: true,
        };
        let sql = statement(carlsbad, all, 20, Some(4), 1);
        assert!(!sql.contains("load_extension"));
        assert!(!sql.to_lowercase().contains("temp"));
        let code: String = sql
            .lines()
            .map(|l| l.split("--").next().unwrap_or(""))
            .collect();
        assert_eq!(code.matches(';').count(), 1, "one statement");
        assert!(sql.trim_end().ends_with(';'));
    }

    #[test]
    fn scores_are_rounded_as_the_command_rounds() {
        // Exact halves (6.25 -> 6.2, 0.75 -> 0.8) and every other fraction up to 400 games.
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql = format!(
            "SELECT {} FROM (SELECT (500 * ?1) / ?2 AS t, (500 * ?1) % ?2 AS r, ?2 AS s)",
            score("t", "r", "s")
        );
        let mut st = conn.prepare(&sql).unwrap();
        for scored in 0..=400i64 {
            for points in 0..=2 * scored {
                let got: Option<String> = st.query_row([points, scored], |r| r.get(0)).unwrap();
                let want = crate::model::similar::Similar {
                    pawns: Pawns::default(),
                    sets: (0, 0),
                    distance: 0,
                    differs: String::new(),
                    positions: 0,
                    games: 0,
                    points: points as u64,
                    scored: scored as u64,
                }
                .white_score()
                .map(|v| format!("{v:.1}"));
                assert_eq!(got, want, "{points} / {scored}");
            }
        }
    }

    #[test]
    fn keys_tell_every_placement_apart() {
        for width in [1u32, 2] {
            let mut seen = std::collections::HashSet::new();
            for k in 0..(1u32 << (6 * width)) {
                let at = slot(key_pawns(k, 2, width), 2, width);
                assert!(at < usize::try_from(modulus(width)).unwrap());
                assert!(seen.insert(at), "width {width}, key {k}");
            }
        }
    }

    #[test]
    fn cost_tables_hold_the_weighted_costs() {
        // White d4 alone, the c- and d-file pair: the key has the c-file in its even bits
        // (rank 2 lowest). No pawn: 2 · 4 on d; a pawn on d4 (rank 4: bit 2 · 2 + 1): 0; c2
        // and d4: 2 · 4 for c.
        let t = 1u64 << 27;
        let table = cost_table(t, 2, 2, false).unwrap();
        let byte = |k: u32| {
            let at = 2 * slot(key_pawns(k, 2, 2), 2, 2);
            u32::from_str_radix(&table[at..at + 2], 16).unwrap() - BIAS
        };
        assert_eq!(table.len(), 2 * 4100);
        assert_eq!(byte(0), 8);
        assert_eq!(byte(1 << 5), 0);
        assert_eq!(byte(1 << 5 | 1), 8);
        // d2 instead of d4: two ranks in the centre.
        assert_eq!(byte(1 << 1), 4);
        assert_eq!(key_pawns(1 << 5 | 1, 2, 2), 1 << 27 | 1 << 10);
        // The a- and b-files without pawns in the target: a pawn there costs 4, ignored 0.
        let wings = cost_table(t, 0, 2, false).unwrap();
        assert_eq!(&wings[2 * slot(1 << 8, 0, 2)..][..2], "05");
        assert!(part(t, true).matches("unicode").count() == 2);
    }

    #[test]
    fn a_pair_whose_costs_overflow_a_byte_is_read_file_by_file() {
        // 16 pawns on the c- and d-files (no command takes such a target since issue 24: a
        // side has at most 8 pawns, none on rank 1 or 8): the centre pair is read file by file.
        assert_eq!(
            part(0x0C0C_0C0C_0C0C_0C0C, false)
                .matches("unicode(")
                .count(),
            5
        );
        assert_eq!(part(0, false).matches("unicode(").count(), 4);
    }
}
