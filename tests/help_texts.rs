//! The `--help` of each command says what the binary does (issue 24, point 10): what
//! `export parquet` writes, what `stats --per` and `query --count` count, and every exit status
//! of `index`.

mod common;

use common::query::pawndex;

/// The `--help` text of `args`, which must succeed.
fn help(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--help");
    pawndex(&all).ok(&all.join(" ")).to_string()
}

/// The lines of the option `--name`'s entry in a long help text: its line and the indented
/// lines after it, up to the next option.
fn option_entry(help: &str, name: &str) -> String {
    let mut lines = help.lines().skip_while(|l| {
        let t = l.trim_start();
        !(t.starts_with(name) && t[name.len()..].starts_with([' ', '\0']) || t == name)
    });
    let mut entry = match lines.next() {
        Some(first) => format!("{first}\n"),
        None => panic!("no entry for {name} in:\n{help}"),
    };
    for l in lines {
        let t = l.trim_start();
        if t.starts_with("--") || t.starts_with("-h,") || (!l.is_empty() && !l.starts_with(' ')) {
            break;
        }
        entry.push_str(l);
        entry.push('\n');
    }
    entry
}

#[test]
fn export_parquet_help_names_every_table_it_writes() {
    let text = help(&["export", "parquet"]);
    for table in ["games", "runs", "structure_changes", "rejects"] {
        assert!(
            text.contains(table),
            "export parquet --help omits {table}:\n{text}"
        );
    }
    let short = pawndex(&["export", "--help"])
        .ok("export --help")
        .to_string();
    assert!(
        short.contains("structure changes"),
        "export --help's line for parquet omits the structure changes:\n{short}"
    );
}

#[test]
fn stats_help_describes_per_for_stats_not_find() {
    let text = help(&["stats"]);
    let per = option_entry(&text, "--per");
    assert!(
        !per.contains("find"),
        "stats --help explains --per through find:\n{per}"
    );
    assert!(
        per.contains("group"),
        "stats --help's --per game does not say a game counts once per group:\n{per}"
    );
    // find keeps its own wording: one row per game, at its first matching ply.
    let find_per = option_entry(&help(&["find"]), "--per");
    assert!(
        find_per.contains("first matching ply"),
        "find --help's --per lost its meaning:\n{find_per}"
    );
}

#[test]
fn query_help_explains_count_without_find() {
    let text = help(&["query"]);
    let count = option_entry(&text, "--count");
    assert!(
        !count.contains("find"),
        "query --help explains --count through find:\n{count}"
    );
    let find_count = option_entry(&help(&["find"]), "--count");
    assert!(
        find_count.contains("--per game"),
        "find --help's --count no longer says it counts games with --per game:\n{find_count}"
    );
}

#[test]
fn query_help_names_every_view_of_dataset() {
    let dataset = option_entry(&help(&["query"]), "--dataset");
    assert!(
        dataset.contains("structure_changes"),
        "query --help's --dataset omits the structure_changes view:\n{dataset}"
    );
}

#[test]
fn index_help_names_every_exit_status() {
    let text = help(&["index"]);
    for status in [
        "0 success",
        "1 error",
        "2 bad command line",
        "130 interrupted",
    ] {
        assert!(
            text.contains(status),
            "index --help omits exit status {status:?}:\n{text}"
        );
    }
    // And 2 is what a bad command line gives.
    pawndex(&["index", "--no-such-option", "x.pgn"]).expect(2, "index with an unknown option");
}
