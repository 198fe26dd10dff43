//! One vocabulary: `pawndex query NAME` answers a catalogue structure too (its key or display
//! name, any case, KEY~ for the colour-reversed form) with the positions of `pawndex find
//! --structure-name KEY`; `--list` says which names are feature patterns and which are
//! catalogue structures; a name that is both (carlsbad) runs the feature pattern.

mod common;

use common::query::{Db, positions_of_csv};

/// `query ARGS` on the fixtures, which must succeed.
fn query(db: &Db, args: &[&str]) -> String {
    db.run("query", args)
        .ok(&format!("query {args:?}"))
        .to_string()
}

fn find(db: &Db, args: &[&str]) -> String {
    db.run("find", args)
        .ok(&format!("find {args:?}"))
        .to_string()
}

#[test]
fn a_structure_key_or_name_is_a_query_with_the_positions_of_find() {
    let db = Db::fixtures();
    // (as typed to query, the --structure-name form find gets)
    let cases = [
        ("maroczy", "maroczy"),
        ("Maroczy Bind", "maroczy"),
        ("MAROCZY", "maroczy"),
        ("open-kid", "open-kid"),
        ("Open King's Indian", "open-kid"),
        ("hanging-pawns~", "hanging-pawns~"),
        ("Hanging Pawns (reversed)", "hanging-pawns~"),
        ("carlsbad~", "carlsbad~"),
        ("Caro-Kann", "caro-kann"),
    ];
    for (typed, form) in cases {
        let want = positions_of_csv(&find(&db, &["--structure-name", form, "--format", "csv"]));
        assert!(!want.is_empty(), "{form}: the fixtures never reach it");
        let got = positions_of_csv(&query(&db, &[typed, "--format", "csv"]));
        assert_eq!(got, want, "query {typed:?}");
        assert_eq!(
            query(&db, &[typed, "--count"]).trim(),
            want.len().to_string(),
            "query {typed:?} --count"
        );
        // Exports read the same positions.
        for format in ["fen", "pgn"] {
            assert_eq!(
                query(&db, &[typed, "--format", format]),
                find(&db, &["--structure-name", form, "--format", format]),
                "query {typed:?} --format {format}"
            );
        }
        assert_eq!(
            query(&db, &[typed, "--format", "csv", "--limit", "2"])
                .lines()
                .count(),
            3,
            "query {typed:?} --limit 2"
        );
    }
    // find takes the same names as typed.
    assert_eq!(
        find(&db, &["--structure-name", "Maroczy Bind", "--count"]),
        find(&db, &["--structure-name", "maroczy", "--count"])
    );
    // The SQL of a structure query keeps the key a parameter.
    let sql = query(&db, &["Isolani", "--print-sql"]);
    assert!(sql.contains(":structure_1 = 'isolani'"), "{sql}");
    // A reversed form the catalogue does not look for, and a --param, are usage errors.
    let out = db.run("query", &["benko~"]);
    out.expect(2, "query benko~");
    assert!(out.stderr.contains("normal form only"), "{}", out.stderr);
    db.run("query", &["isolani", "--param", "x=1"])
        .expect(2, "query isolani --param x=1");
}

#[test]
fn a_name_that_is_both_runs_the_feature_pattern_and_case_is_ignored() {
    let db = Db::fixtures();
    let pattern = query(&db, &["carlsbad", "--count"]);
    for typed in ["Carlsbad", "CARLSBAD"] {
        assert_eq!(query(&db, &[typed, "--count"]), pattern, "query {typed}");
    }
    assert_eq!(
        query(&db, &["White-Quart", "--count"]),
        query(&db, &["white-quart", "--count"])
    );
    // The feature pattern and the catalogue structure differ on the fixtures: the pattern's
    // positions are a superset (the catalogue gives each position one name).
    let structure = find(&db, &["--structure-name", "carlsbad", "--count"]);
    let (p, s): (u64, u64) = (
        pattern.trim().parse().unwrap(),
        structure.trim().parse().unwrap(),
    );
    assert!(p >= s, "pattern {p}, structure {s}");
}

#[test]
fn list_says_which_names_are_patterns_and_which_are_structures() {
    let db = Db::fixtures();
    let list = query(&db, &["--list"]);
    let (patterns, structures) = list.split_once("\n\n").expect("two sections");
    assert!(patterns.starts_with("Feature patterns:"), "{list}");
    assert!(structures.starts_with("Catalogue structures:"), "{list}");
    assert!(
        patterns
            .lines()
            .any(|l| l.trim_start().starts_with("white-isolated-queen-pawn ")),
        "{list}"
    );
    assert!(
        structures
            .lines()
            .any(|l| l.trim_start().starts_with("isolani ") && l.contains("Isolani")),
        "{list}"
    );
    let both = structures
        .lines()
        .find(|l| l.trim_start().starts_with("carlsbad "))
        .expect("carlsbad listed as a structure");
    assert!(
        both.contains("feature pattern") && both.contains("find --structure-name carlsbad"),
        "{both}"
    );
}

#[test]
fn unknown_names_suggest_patterns_and_structures() {
    let db = Db::fixtures();
    let out = db.run("query", &["isolan"]);
    out.expect(2, "query isolan");
    assert!(out.stderr.contains("isolani"), "{}", out.stderr);
    assert!(
        out.stderr.contains("white-isolated-queen-pawn"),
        "{}",
        out.stderr
    );
    let out = db.run("query", &["hedgehogg", "--count"]);
    out.expect(2, "query hedgehogg");
    assert!(
        out.stderr.contains("did you mean hedgehog"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_structure_prints_in_the_dialects() {
    let db = Db::fixtures();
    for dialect in ["duckdb", "spark"] {
        let sql = query(&db, &["isolani~", "--dialect", dialect, "--print-sql"]);
        assert!(
            sql.contains("structure = 'isolani' AND structure_reversed = true"),
            "{sql}"
        );
        let count = query(
            &db,
            &["Isolani", "--dialect", dialect, "--print-sql", "--count"],
        );
        assert!(
            count.contains("structure = 'isolani' AND structure_reversed = false"),
            "{count}"
        );
    }
}
