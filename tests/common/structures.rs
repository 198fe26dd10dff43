//! Small structure catalogues for tests (`PAWNDEX_STRUCTURES`), so that they do not depend on
//! the definitions in `structures/`, and databases classified with them.

#![allow(dead_code)] // each test crate uses a different subset

use std::path::{Path, PathBuf};

use super::query::{FIXTURES, pawndex_env, random_games_pgn, write_file};
use super::{ROOT, root_path};

/// The Carlsbad: d4+e3 without a c-pawn against c6+d5 without an e-pawn; reversed form too.
pub const CARLSBAD: &str = r#"name = "Carlsbad"
family = "d4-d5"
description = "d4+e3, no c-pawn, against c6+d5, no e-pawn."
source = "test catalogue"
reversed = true
[white]
pawns = ["d4", "e3"]
none = ["c"]
[black]
pawns = ["c6", "d5"]
none = ["e"]
"#;

/// The isolani: a White d-pawn without c- or e-pawns, Black without c- or d-pawn; reversed
/// form too.
pub const ISOLANI: &str = r#"name = "Isolani"
family = "d4-d5"
description = "A White d-pawn without c- or e-pawns beside it; Black has no c- or d-pawn."
source = "test catalogue"
reversed = true
[white]
pawns = ["d4"]
none = ["c", "e"]
[black]
none = ["c", "d"]
"#;

/// Writes the definitions (key, file text) into a new folder `structures` of `dir`.
pub fn write_catalogue(dir: &Path, definitions: &[(&str, &str)]) -> PathBuf {
    let catalogue = dir.join("structures");
    std::fs::create_dir(&catalogue).unwrap();
    for (key, text) in definitions {
        write_file(&catalogue, &format!("{key}.toml"), text);
    }
    catalogue
}

/// Indexes the fixtures and `random` random games (from `seed`) into `dir/name`, classified
/// with the catalogue folder `catalogue`; returns the database's path.
pub fn index_classified(
    dir: &Path,
    catalogue: &Path,
    seed: u64,
    random: usize,
    name: &str,
) -> PathBuf {
    let games = write_file(dir, "random.pgn", &random_games_pgn(seed, random));
    let path = dir.join(name);
    let mut args = vec![
        "index".to_string(),
        "--quiet".to_string(),
        "--db".to_string(),
        path.display().to_string(),
    ];
    args.extend(FIXTURES.iter().map(|f| root_path(f).display().to_string()));
    args.push(games.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let env = [("PAWNDEX_STRUCTURES", catalogue.to_str().unwrap())];
    pawndex_env(Path::new(ROOT), &args, &env).ok("index");
    path
}

/// More conditions than the Carlsbad, so it wins while White's pawn stands on b4.
pub const MINORITY: &str = r#"
name = "Minority attack"
family = "Soltis"
description = "A Carlsbad with White's b-pawn on b4."
source = "test"
[white]
pawns = ["b4", "d4", "e3"]
none = ["c"]
[black]
pawns = ["c6", "d5"]
none = ["e"]
"#;
