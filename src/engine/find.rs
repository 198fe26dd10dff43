//! The filters of `pawndex find` (and of `GET /api/games`) as text, turned into a typed
//! [`Search`]: features, pawns, an exact structure, named structures, plies and the game's
//! tags, each mistake refused by name (a usage error with the option's words).

use anyhow::Result;
use shakmaty::{Color, File, Rank, Square};

use crate::model::features::Kind;
use crate::model::fen::structure_of;
use crate::model::outcome::side_name;
use crate::model::search::SortKey;
use crate::model::time_class::TimeClass;
use crate::model::{UsageError, usage};
use crate::store::read::Snapshot;
use crate::store::read::search::{
    Feature, GameCond, Op, RunCond, Search, SetCond, Side, StructureForm, StructureName,
};

/// The filters as given: each field is the `find` option of the same name.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub white: Vec<String>,
    pub black: Vec<String>,
    pub pawns: Vec<String>,
    pub no_pawns: Vec<String>,
    pub structure: Option<String>,
    pub structure_name: Vec<String>,
    pub ply: Option<String>,
    pub result: Vec<String>,
    pub min_elo: Option<i64>,
    pub player: Vec<String>,
    pub white_player: Vec<String>,
    pub black_player: Vec<String>,
    /// `--player-name`: a player's every stored spelling, through the name look-up.
    pub player_name: Vec<String>,
    pub event: Vec<String>,
    pub site: Vec<String>,
    pub eco: Vec<String>,
    pub date: Vec<String>,
    pub max_elo: Option<i64>,
    pub year: Vec<String>,
    pub time_class: Vec<String>,
    pub exclude_time_class: Vec<String>,
    pub min_stay: Option<i64>,
    /// `--sort KEY` (the games' order, `--per game` only).
    pub sort: Option<String>,
    /// `--reverse`: the order flipped.
    pub reverse: bool,
}

fn side_of(color: Color) -> Side {
    match color {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

/// Adds the condition of one `--white`/`--black` FEATURE.
fn feature(f: &mut Search, color: Color, text: &str) -> Result<()> {
    let side = side_name(color);
    let flag = format!("--{side}");
    let t = text.trim().to_ascii_lowercase();
    let conds = match color {
        Color::White => &mut f.white,
        Color::Black => &mut f.black,
    };
    if let Some(squares) = Feature::parse(&t).filter(|f| f.kind() == Kind::Squares) {
        conds.push(SetCond::Has(squares));
        return Ok(());
    }
    match t.as_str() {
        "bishop-pair" | "no-bishop-pair" => f
            .runs
            .push(RunCond::BishopPair(side_of(color), t == "bishop-pair")),
        _ => {
            let Some(at) = t.find(|c: char| "=<>!:".contains(c)) else {
                usage!(
                    "{flag} {text}: unknown feature; expected {}, bishop-pair, \
                     no-bishop-pair, or {} with a range \
                     (islands:3.., islands:2..4, islands:3) or compared with a whole number by \
                     =, !=, <, <=, > or >= ('islands>=3', quoted)",
                    feature_names(Kind::Squares, ", "),
                    feature_names(COUNT, " or "),
                );
            };
            let (name, rest) = t.split_at(at);
            let Some(measure) = Feature::parse(name).filter(|f| f.max_value().is_some()) else {
                usage!(
                    "{flag} {text}: unknown feature \"{}\"; numeric features are {}",
                    name.trim(),
                    feature_names(COUNT, " and ")
                );
            };
            if let Some(range) = rest.strip_prefix(':') {
                for (op, n) in feature_range(range).map_err(|why| {
                    anyhow::Error::new(UsageError(format!("{flag} {text}: {why}")))
                })? {
                    conds.push(SetCond::Compare(measure, op, n));
                }
                return Ok(());
            }
            let op_len = rest
                .find(|c: char| !"=<>!".contains(c))
                .unwrap_or(rest.len());
            let (op, number) = rest.split_at(op_len);
            let op = match op {
                "=" | "==" => Op::Eq,
                "!=" => Op::Ne,
                "<" => Op::Lt,
                "<=" => Op::Le,
                ">" => Op::Gt,
                ">=" => Op::Ge,
                _ => {
                    usage!("{flag} {text}: unknown comparison \"{op}\"; use =, !=, <, <=, > or >=")
                }
            };
            let Ok(n) = number.trim().parse::<i64>() else {
                usage!("{flag} {text}: \"{}\" is not a whole number", number.trim());
            };
            conds.push(SetCond::Compare(measure, op, n));
        }
    }
    Ok(())
}

/// Any count, for [`feature_names`].
const COUNT: Kind = Kind::Count { max: 0 };

/// The names of the side features of `kind`'s variant, joined by ", " and `last` before the
/// last one (`islands, dispersion or distortion`).
fn feature_names(kind: Kind, last: &str) -> String {
    let names: Vec<&str> = Feature::all()
        .filter(|f| std::mem::discriminant(&f.kind()) == std::mem::discriminant(&kind))
        .map(Feature::name)
        .collect();
    match names.split_last() {
        Some((end, [])) => (*end).to_string(),
        Some((end, rest)) => format!("{}{last}{end}", rest.join(", ")),
        None => String::new(),
    }
}

/// Refuses one side's numeric feature conditions that no position meets (`islands:6..`, or
/// `'islands>=3'` with `islands:..2`), naming them. A side has 0 to 4 islands (8 files hold
/// at most 4 groups); dispersion is at most 3 × 4² = 48 and distortion at most 56 (one per
/// cell of files b to h): bounds no position passes, though not the tightest.
fn check_measures(flag: &str, given: &[String], conds: &[SetCond]) -> Result<()> {
    for measure in Feature::all() {
        let Some(max) = measure.max_value().map(i64::from) else {
            continue;
        };
        let name = measure.name();
        let (mut lo, mut hi, mut not, mut any) = (0i64, max, Vec::new(), false);
        for c in conds {
            let SetCond::Compare(m, op, n) = *c else {
                continue;
            };
            if m != measure {
                continue;
            }
            any = true;
            match op {
                Op::Eq => (lo, hi) = (lo.max(n), hi.min(n)),
                Op::Ne => not.push(n),
                Op::Lt => hi = hi.min(n.saturating_sub(1)),
                Op::Le => hi = hi.min(n),
                Op::Gt => lo = lo.max(n.saturating_add(1)),
                Op::Ge => lo = lo.max(n),
            }
        }
        if any && (lo..=hi).all(|v| not.contains(&v)) {
            let named: Vec<String> = given
                .iter()
                .filter(|t| t.trim().to_ascii_lowercase().starts_with(name))
                .map(|t| format!("{flag} {t}"))
                .collect();
            let what = if named.len() > 1 {
                "these conditions leave no value"
            } else {
                "no position can match"
            };
            usage!(
                "{}: {what} (for one side, {name} is always between 0 and {max})",
                named.join(" ")
            );
        }
    }
    Ok(())
}

/// The comparisons a quote-free range stands for: `3..` (at least 3), `..2` (at most 2),
/// `2..4` (2 to 4, both included), `3` (exactly 3).
pub(crate) fn feature_range(range: &str) -> std::result::Result<Vec<(Op, i64)>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<i64>()
            .map_err(|_| format!("\"{}\" is not a whole number", s.trim()))
    };
    let Some((lo, hi)) = range.split_once("..") else {
        return Ok(vec![(Op::Eq, number(range)?)]);
    };
    let mut out = Vec::new();
    if !lo.trim().is_empty() {
        out.push((Op::Ge, number(lo)?));
    }
    if !hi.trim().is_empty() {
        out.push((Op::Le, number(hi)?));
    }
    if out.is_empty() {
        return Err("a range needs a bound (3.., ..2 or 2..4)".to_string());
    }
    if let [(_, from), (_, to)] = out[..]
        && from > to
    {
        return Err(format!("the range is empty ({from} > {to})"));
    }
    Ok(out)
}

/// Parses one side-prefixed token of --pawns/--no-pawns: (colour, squares as a bitboard).
pub(crate) fn side_squares(flag: &str, token: &str, files_allowed: bool) -> Result<(Color, u64)> {
    let lower = token.to_ascii_lowercase();
    let (color, rest) = match lower.split_at_checked(1) {
        Some(("w", rest)) => (Color::White, rest),
        Some(("b", rest)) => (Color::Black, rest),
        _ => usage!(
            "{flag}: \"{token}\" must start with w (White) or b (Black), as in \"wd4\"{}",
            if files_allowed { " or \"wc\"" } else { "" }
        ),
    };
    if files_allowed
        && rest.len() == 1
        && let Some(file) = rest.chars().next().and_then(File::from_char)
    {
        return Ok((color, 0x0101_0101_0101_0101u64 << u32::from(file)));
    }
    match rest.parse::<Square>() {
        Ok(sq) if !files_allowed && matches!(sq.rank(), Rank::First | Rank::Eighth) => {
            usage!("{flag}: \"{token}\": no pawn stands on {sq} (pawns never stand on rank 1 or 8)")
        }
        Ok(sq) => Ok((color, 1u64 << u32::from(sq))),
        Err(_) if files_allowed => {
            usage!("{flag}: \"{token}\" is not a file (a..h) or square (a1..h8) after w/b")
        }
        Err(_) => usage!("{flag}: \"{token}\" is not a square (a1..h8) after w/b"),
    }
}

/// Splits repeatable, space- or comma-separated token lists. A value that holds no token
/// (`""`, `","`) is a usage error: dropping it would drop the filter and match everything.
fn tokens<'a>(flag: &str, values: &'a [String]) -> Result<Vec<&'a str>> {
    let mut out = Vec::new();
    for v in values {
        let before = out.len();
        out.extend(
            v.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|t| !t.is_empty()),
        );
        if out.len() == before {
            usage!("{flag} {v:?}: the value is empty (give at least one item)");
        }
    }
    Ok(out)
}

/// The values of a filter that takes several (the one rule: repeat the option, or separate
/// values by commas). A value that holds none (`""`, `","`) is a usage error: dropping it
/// would drop the filter and match everything.
fn values<'a>(flag: &str, given: &'a [String]) -> Result<Vec<&'a str>> {
    let mut out = Vec::new();
    for v in given {
        let before = out.len();
        out.extend(v.split(',').map(str::trim).filter(|t| !t.is_empty()));
        if out.len() == before {
            usage!("{flag} {v:?}: the value is empty (give at least one item)");
        }
    }
    Ok(out)
}

/// The most values one filter takes (`--player A --player B`, `--result 1-0,0-1`: any of
/// them). Each is a condition of one SQL expression; a thousand made one deeper than SQLite
/// allows. More is refused, naming the filter.
pub const MAX_VALUES: usize = 100;

/// The highest rating `--min-elo` takes (no player has been rated above 2900).
pub const MAX_ELO: i64 = 4000;

/// Refuses a `--min-elo` outside 0 to [`MAX_ELO`] (`find`'s and `stats`', the command's and the
/// server's: one rule).
pub fn check_min_elo(elo: i64) -> Result<()> {
    if (0..=MAX_ELO).contains(&elo) {
        return Ok(());
    }
    Err(crate::model::bad_value(
        "--min-elo",
        elo.to_string(),
        format!("not a rating (give one from 0 to {MAX_ELO})"),
    ))
}

/// Refuses a `--max-elo` outside 0 to [`MAX_ELO`], as [`check_min_elo`].
pub fn check_max_elo(elo: i64) -> Result<()> {
    if (0..=MAX_ELO).contains(&elo) {
        return Ok(());
    }
    Err(crate::model::bad_value(
        "--max-elo",
        elo.to_string(),
        format!("not a rating (give one from 0 to {MAX_ELO})"),
    ))
}

/// Refuses a filter given more than [`MAX_VALUES`] values.
fn check_value_counts(args: &Filters) -> Result<()> {
    let lists: [(&'static str, &[String]); 17] = [
        ("--white", &args.white),
        ("--black", &args.black),
        ("--pawns", &args.pawns),
        ("--no-pawns", &args.no_pawns),
        ("--structure-name", &args.structure_name),
        ("--result", &args.result),
        ("--player", &args.player),
        ("--white-player", &args.white_player),
        ("--black-player", &args.black_player),
        ("--player-name", &args.player_name),
        ("--event", &args.event),
        ("--site", &args.site),
        ("--eco", &args.eco),
        ("--date", &args.date),
        ("--year", &args.year),
        ("--time-class", &args.time_class),
        ("--exclude-time-class", &args.exclude_time_class),
    ];
    for (flag, given) in lists {
        // A name may hold commas and spaces ("Kasparov, Garry"): the text filters count the
        // values given; the others, the items of each value.
        let text = matches!(
            flag,
            "--player"
                | "--white-player"
                | "--black-player"
                | "--player-name"
                | "--event"
                | "--site"
        );
        let n: usize = given
            .iter()
            .map(|v| {
                if text {
                    1
                } else {
                    v.split([',', ' '])
                        .filter(|t| !t.trim().is_empty())
                        .count()
                        .max(1)
                }
            })
            .sum();
        if n > MAX_VALUES {
            return Err(crate::model::bad_value(
                flag,
                "",
                format!(
                    "{n} values given; one filter takes at most {MAX_VALUES} (a game matches \
                     if any of them holds)"
                ),
            ));
        }
    }
    Ok(())
}

/// The search the filters describe (`find`'s, and `GET /api/games`'s).
pub fn search(args: &Filters) -> Result<Search> {
    check_value_counts(args)?;
    let mut f = Search::default();
    for t in &args.white {
        feature(&mut f, Color::White, t)?;
    }
    for t in &args.black {
        feature(&mut f, Color::Black, t)?;
    }
    check_measures("--white", &args.white, &f.white)?;
    check_measures("--black", &args.black, &f.black)?;
    let (required, absent) = pawn_squares(args, &mut f)?;
    if let Some(fen) = &args.structure {
        exact_structure(&mut f, fen, required, absent)?;
    }
    for t in values("--structure-name", &args.structure_name)? {
        let form = structure_form(t)?;
        if !f.structures.contains(&form) {
            f.structures.push(form);
        }
    }
    if let Some(range) = &args.ply {
        f.plies = crate::model::ply_range(range)
            .map_err(|why| crate::model::bad_value("--ply", range.as_str(), why))?;
    }
    game_filters(args, &mut f)?;
    model_game_filters(args, &mut f)?;
    Ok(f)
}

/// The most plies `--min-stay` takes (a game holds at most this many positions).
pub const MAX_STAY: i64 = crate::model::game::MAX_PLIES as i64 + 1;

/// The filters and the order of model games: `--max-elo`, `--year`, `--time-class`,
/// `--exclude-time-class`, `--min-stay`, `--sort` and `--reverse`.
fn model_game_filters(args: &Filters, f: &mut Search) -> Result<()> {
    if let Some(elo) = args.max_elo {
        check_max_elo(elo)?;
        if let Some(min) = args.min_elo
            && min > elo
        {
            usage!("--min-elo {min} and --max-elo {elo}: no rating lies between them");
        }
        f.games.push(GameCond::MaxElo(elo));
    }
    let mut years = Vec::new();
    for range in values("--year", &args.year)? {
        let (from, to) =
            year_range(range).map_err(|why| crate::model::bad_value("--year", range, why))?;
        years.push(GameCond::Date(from, to));
    }
    f.games.extend(any_of(years));
    for (flag, given, exclude) in [
        ("--time-class", &args.time_class, false),
        ("--exclude-time-class", &args.exclude_time_class, true),
    ] {
        let mut names: Vec<String> = Vec::new();
        for v in values(flag, given)? {
            let Some(class) = TimeClass::parse(v) else {
                let all: Vec<&str> = TimeClass::ALL.iter().map(|c| c.name()).collect();
                return Err(crate::model::bad_value(
                    flag,
                    v,
                    format!(
                        "not a time class (give {}; several: blitz,bullet)",
                        all.join(", ")
                    ),
                ));
            };
            if !names.iter().any(|n| n == class.name()) {
                names.push(class.name().to_string());
            }
        }
        if !names.is_empty() {
            f.games.push(if exclude {
                GameCond::ExcludeTimeClasses(names)
            } else {
                GameCond::TimeClasses(names)
            });
        }
    }
    if let Some(n) = args.min_stay {
        if !(0..=MAX_STAY).contains(&n) {
            return Err(crate::model::bad_value(
                "--min-stay",
                n.to_string(),
                format!("not a number of plies (give one from 0 to {MAX_STAY})"),
            ));
        }
        if n > 0 {
            f.min_stay = Some(n as u32);
        }
    }
    if let Some(key) = &args.sort {
        let Some(key) = SortKey::parse(key) else {
            let all: Vec<&str> = SortKey::ALL.iter().map(|k| k.name()).collect();
            return Err(crate::model::bad_value(
                "--sort",
                key.as_str(),
                format!("not a sort key (give {})", all.join(", ")),
            ));
        };
        let positions = f
            .white
            .iter()
            .chain(&f.black)
            .any(|c| !matches!(c, SetCond::Exactly(_)))
            || !f.runs.is_empty()
            || f.plies != (0, u32::MAX);
        if key == SortKey::Typicality && positions {
            return Err(crate::model::bad_value(
                "--sort",
                "typicality",
                "it lists the games of a structure under game filters: no --white, --black, \
                 --pawns, --no-pawns nor --ply",
            ));
        }
        if key == SortKey::Typicality && args.structure.is_none() && args.structure_name.is_empty()
        {
            return Err(crate::model::bad_value(
                "--sort",
                "typicality",
                "give the structure (--structure-name KEY or --structure FEN): a game is \
                 typical of a structure",
            ));
        }
        f.order.key = key;
    }
    f.order.reverse = args.reverse;
    Ok(())
}

/// A `--year` range as the bounds of a date range: `2001`, `1990..1999`, `2000..`, `..1950`.
pub(crate) fn year_range(
    range: &str,
) -> std::result::Result<(Option<String>, Option<String>), String> {
    let (a, b) = range.split_once("..").unwrap_or((range, range));
    for y in [a, b] {
        let y = y.trim();
        let year = y.len() == 4 && y.bytes().all(|c| c.is_ascii_digit());
        if !y.is_empty() && !year {
            return Err(format!(
                "\"{y}\" is not a year (four digits: 2001, 1990..1999, 2000.., ..1950)"
            ));
        }
    }
    date_range(range)
}

/// `--pawns` and `--no-pawns` into each side's conditions, refusing a square required for
/// both sides, more than 8 pawns, or a square both required and excluded; the squares
/// required and excluded per side (White first).
fn pawn_squares(args: &Filters, f: &mut Search) -> Result<([u64; 2], [u64; 2])> {
    let mut required = [0u64; 2];
    for t in tokens("--pawns", &args.pawns)? {
        let (color, bb) = side_squares("--pawns", t, false)?;
        required[color as usize] |= bb;
    }
    let mut absent = [0u64; 2];
    for t in tokens("--no-pawns", &args.no_pawns)? {
        let (color, bb) = side_squares("--no-pawns", t, true)?;
        absent[color as usize] |= bb;
    }
    let both = required[0] & required[1];
    if both != 0 {
        usage!(
            "--pawns: {} is required for White and for Black (a square holds one pawn)",
            crate::store::read::search::squares(both)
        );
    }
    for color in [Color::White, Color::Black] {
        let n = required[color as usize].count_ones();
        if n > 8 {
            usage!(
                "--pawns: {n} {} pawns required (a side has at most 8)",
                side_name(color)
            );
        }
    }
    for color in [Color::White, Color::Black] {
        let side = side_name(color);
        let (req, abs) = (required[color as usize], absent[color as usize]);
        if req & abs != 0 {
            usage!(
                "--pawns and --no-pawns contradict each other for {side} (a square is both \
                 required and excluded)"
            );
        }
        let conds = match color {
            Color::White => &mut f.white,
            Color::Black => &mut f.black,
        };
        if req != 0 {
            conds.push(SetCond::PawnsOn(req));
        }
        if abs != 0 {
            conds.push(SetCond::NoPawnsOn(abs));
        }
    }
    Ok((required, absent))
}

/// `--structure FEN`: exactly its pawns on each side, refused against `--pawns` and
/// `--no-pawns` that contradict it.
fn exact_structure(f: &mut Search, fen: &str, required: [u64; 2], absent: [u64; 2]) -> Result<()> {
    let (white, black) = structure_of(fen)?;
    for (color, pawns) in [(Color::White, white), (Color::Black, black)] {
        let (req, abs) = (required[color as usize], absent[color as usize]);
        let side = side_name(color);
        if req & !pawns != 0 {
            usage!(
                "--structure and --pawns contradict each other: the structure has no {side} \
                 pawn on {}",
                crate::store::read::search::squares(req & !pawns)
            );
        }
        if abs & pawns != 0 {
            usage!(
                "--structure and --no-pawns contradict each other: the structure has {side} \
                 pawns on {}",
                crate::store::read::search::squares(abs & pawns)
            );
        }
    }
    f.white.push(SetCond::Exactly(white));
    f.black.push(SetCond::Exactly(black));
    Ok(())
}

/// The game filters: `--result`, `--min-elo`, the player, event and site texts, `--eco` and
/// `--date` (several values of one filter: any of them).
fn game_filters(args: &Filters, f: &mut Search) -> Result<()> {
    let mut results = Vec::new();
    for r in values("--result", &args.result)? {
        if !RESULTS.contains(&r) {
            return Err(crate::model::bad_value(
                "--result",
                r,
                "expected 1-0, 0-1, 1/2-1/2 or * (several: 1-0,0-1)",
            ));
        }
        results.push(GameCond::Result(r.to_string()));
    }
    f.games.extend(any_of(results));
    if let Some(elo) = args.min_elo {
        check_min_elo(elo)?;
        f.games.push(GameCond::MinElo(elo));
    }
    let texts: [TextFilter<'_>; 6] = [
        ("--player", &args.player, GameCond::Player),
        ("--player-name", &args.player_name, GameCond::PlayerName),
        ("--white-player", &args.white_player, GameCond::WhitePlayer),
        ("--black-player", &args.black_player, GameCond::BlackPlayer),
        ("--event", &args.event, GameCond::Event),
        ("--site", &args.site, GameCond::Site),
    ];
    for (flag, values, cond) in texts {
        let mut conds = Vec::new();
        for text in values {
            if text.trim().is_empty() {
                usage!("{flag}: the text is empty");
            }
            conds.push(cond(text.trim().to_string()));
        }
        f.games.extend(any_of(conds));
    }
    let mut ecos = Vec::new();
    for codes in values("--eco", &args.eco)? {
        let (from, to) =
            eco_range(codes).map_err(|why| crate::model::bad_value("--eco", codes, why))?;
        ecos.push(GameCond::Eco(from, to));
    }
    f.games.extend(any_of(ecos));
    let mut dates = Vec::new();
    for range in values("--date", &args.date)? {
        let (from, to) =
            date_range(range).map_err(|why| crate::model::bad_value("--date", range, why))?;
        dates.push(GameCond::Date(from, to));
    }
    f.games.extend(any_of(dates));
    Ok(())
}

/// One `--structure-name` value as typed: a catalogue key or a structure's display name, `~`
/// (or ` (reversed)`) after it for the colour-reversed form. The name is checked against the
/// database's catalogue later ([`resolve_structure_names`]).
fn structure_form(token: &str) -> Result<StructureForm> {
    let (name, reversed) = reversed_form(token);
    if name.is_empty() || name.ends_with('~') {
        usage!(
            "--structure-name {token}: give a structure's key or name (carlsbad, \"Hanging \
             Pawns\"), with ~ after it for the colour-reversed form (carlsbad~)"
        );
    }
    Ok(StructureForm {
        key: name.to_lowercase(),
        reversed,
    })
}

/// A structure name as typed, without its mark of the colour-reversed form (`carlsbad~`, or
/// `Carlsbad (reversed)` as the `structures` table writes it), and whether it had one.
fn reversed_form(typed: &str) -> (&str, bool) {
    let t = typed.trim();
    if let Some(name) = t.strip_suffix('~') {
        return (name.trim_end(), true);
    }
    let lower = t.to_ascii_lowercase();
    match lower.strip_suffix("(reversed)") {
        Some(name) => (t[..name.len()].trim_end(), true),
        None => (t, false),
    }
}

/// The catalogue structure a name means, the one rule of every command that takes one (`find
/// --structure-name`, `query NAME`): its key (carlsbad) or its display name (Carlsbad, "King's
/// Indian Complex"), case ignored, `~` or ` (reversed)` after it for the colour-reversed
/// form. `None` when no structure of `known` has that key or name.
pub fn match_structure<'a>(
    typed: &str,
    known: &'a [StructureName],
) -> Option<(StructureForm, &'a StructureName)> {
    let (name, reversed) = reversed_form(typed);
    let wanted = name.to_lowercase();
    let found = known
        .iter()
        .find(|n| n.key.to_lowercase() == wanted)
        .or_else(|| known.iter().find(|n| n.name.to_lowercase() == wanted))?;
    let form = StructureForm {
        key: found.key.clone(),
        reversed,
    };
    Some((form, found))
}

/// The keys of the structures of `known` whose key or name is close to `typed` (see
/// [`crate::model::names::closest`]).
pub fn closest_structures<'a>(typed: &str, known: &'a [StructureName]) -> Vec<&'a str> {
    let (name, _) = reversed_form(typed);
    let names = known.iter().flat_map(|n| [n.key.as_str(), n.name.as_str()]);
    let mut keys: Vec<&str> = Vec::new();
    for close in crate::model::names::closest(name, names) {
        if let Some(n) = known.iter().find(|n| n.key == close || n.name == close)
            && !keys.contains(&n.key.as_str())
        {
            keys.push(&n.key);
        }
    }
    keys
}

/// Resolves the structure names of `search` against the catalogue of the database `conn` reads
/// ([`resolve_structure_names`], for `--structure-name`); nothing to read without one.
pub fn resolve_names(conn: &Snapshot, search: &mut Search) -> Result<()> {
    if !search.structures.is_empty() {
        let known = crate::store::read::search::structure_names(conn)?;
        resolve_structure_names("--structure-name", &known, &mut search.structures)?;
    }
    for cond in &mut search.games {
        resolve_player_names(conn, cond)?;
    }
    Ok(())
}

/// Turns a `--player-name` as typed into the player's stored spellings (the name look-up: an
/// unknown or ambiguous name is an error listing the candidates).
fn resolve_player_names(conn: &Snapshot, cond: &mut GameCond) -> Result<()> {
    match cond {
        GameCond::PlayerName(typed) => {
            let player = crate::engine::profile::find_player(conn, typed).map_err(|e| {
                match e.downcast::<crate::model::profile::UnknownPlayer>() {
                    Ok(mut unknown) => {
                        unknown.message = format!("--player-name: {}", unknown.message);
                        anyhow::Error::new(unknown)
                    }
                    Err(e) => e,
                }
            })?;
            *cond = GameCond::Spellings(player.names);
        }
        GameCond::AnyOf(any) => {
            for c in any {
                resolve_player_names(conn, c)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Turns each `--structure-name` (`flag`) into the form of the database's catalogue it names
/// ([`match_structure`]); refuses a name the database does not know (a usage error listing the
/// keys it knows, with the closest ones), or a reversed form of a structure that has none.
pub fn resolve_structure_names(
    flag: &'static str,
    known: &[StructureName],
    forms: &mut Vec<StructureForm>,
) -> Result<()> {
    let mut resolved: Vec<StructureForm> = Vec::new();
    for typed in forms.iter() {
        let label = typed.label();
        let Some((form, name)) = match_structure(&label, known) else {
            let closest = closest_structures(&label, known);
            let closest = if closest.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", closest.join(", "))
            };
            let keys: Vec<&str> = known.iter().map(|n| n.key.as_str()).collect();
            let list = if keys.is_empty() {
                "none (the database's catalogue is empty)".to_string()
            } else {
                keys.join(", ")
            };
            return Err(crate::model::bad_value(
                flag,
                label,
                format!(
                    "unknown structure{closest}\n  known structures: {list} (KEY~ for the \
                     colour-reversed form)"
                ),
            ));
        };
        if form.reversed && !name.reversed {
            usage!(
                "{flag} {label}: the catalogue looks for {} in its normal form only (no {}~)",
                name.key,
                name.key
            );
        }
        if !resolved.contains(&form) {
            resolved.push(form);
        }
    }
    *forms = resolved;
    Ok(())
}

/// A text filter on the game: its flag, its values, the condition each makes.
type TextFilter<'a> = (&'static str, &'a [String], fn(String) -> GameCond);

/// The values `--result` takes.
const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

/// The one condition of a filter given several values: none, the value's own condition, or
/// any of them (a value given twice counts once).
fn any_of(mut conds: Vec<GameCond>) -> Option<GameCond> {
    let mut seen = Vec::new();
    conds.retain(|c| {
        let new = !seen.contains(c);
        if new {
            seen.push(c.clone());
        }
        new
    });
    match conds.len() {
        0 => None,
        1 => conds.pop(),
        _ => Some(GameCond::AnyOf(conds)),
    }
}

/// An ECO range as its first and last three-character codes: `B` is B00..B99, `B2` B20..B29,
/// `D35` D35..D35, `A00-E99` itself (each end may be a prefix too).
pub(crate) fn eco_range(codes: &str) -> std::result::Result<(String, String), String> {
    let bound = |code: &str, fill: char| -> std::result::Result<String, String> {
        let c = code.trim().to_ascii_uppercase();
        let mut chars = c.chars();
        let ok = matches!(chars.next(), Some('A'..='E'))
            && c.len() <= 3
            && chars.all(|d| d.is_ascii_digit());
        if !ok {
            return Err(format!(
                "\"{}\" is not an ECO code or prefix (a letter A-E and up to two digits: B, B2, D35)",
                code.trim()
            ));
        }
        let mut full = c;
        while full.len() < 3 {
            full.push(fill);
        }
        Ok(full)
    };
    let (from, to) = match codes.split_once('-') {
        Some((a, b)) => (bound(a, '0')?, bound(b, '9')?),
        None => (bound(codes, '0')?, bound(codes, '9')?),
    };
    if from > to {
        return Err(format!("the range is empty ({from} comes after {to})"));
    }
    Ok((from, to))
}

/// What is impossible in a date's parts (year, month, day as digits): a month other than
/// 01-12, a day the month does not have (2020.02.30; 2020.02.29 is one).
fn impossible_date(parts: &[&str]) -> Option<String> {
    let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u32>().ok());
    let (year, month) = (num(0)?, num(1)?);
    if !(1..=12).contains(&month) {
        return Some(format!("there is no month {month:02} (01 to 12)"));
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let day = num(2)?;
    (!(1..=days).contains(&day))
        .then(|| format!("month {month:02} of {year} has days 01 to {days}, not {day:02}"))
}

/// A date range as its bounds in PGN form (`2020`, `2020.05`, `2020.05.17`; `-` or `/` may
/// separate the parts).
pub(crate) fn date_range(
    range: &str,
) -> std::result::Result<(Option<String>, Option<String>), String> {
    let bound = |d: &str| -> std::result::Result<Option<String>, String> {
        let d = d.trim();
        if d.is_empty() {
            return Ok(None);
        }
        let parts: Vec<&str> = d.split(['.', '-', '/']).collect();
        let widths = [4, 2, 2];
        let ok = parts.len() <= 3
            && parts
                .iter()
                .zip(widths)
                .all(|(p, w)| p.len() == w && p.bytes().all(|b| b.is_ascii_digit()));
        if !ok {
            return Err(format!(
                "\"{d}\" is not a date (YYYY, YYYY.MM or YYYY.MM.DD)"
            ));
        }
        if let Some(why) = impossible_date(&parts) {
            return Err(format!("\"{d}\" is no date: {why}"));
        }
        Ok(Some(parts.join(".")))
    };
    let (from, to) = match range.split_once("..") {
        Some((a, b)) => (bound(a)?, bound(b)?),
        None => (bound(range)?, bound(range)?),
    };
    if from.is_none() && to.is_none() {
        return Err("a range needs a bound (2020.., ..2019, 2018..2019)".to_string());
    }
    // Each bound is compared at its own precision, so the range is empty when the start, cut
    // to the shorter precision, comes after the end (2020..2019.06, 2019.07..2019.06.15).
    if let (Some(a), Some(b)) = (&from, &to) {
        let n = a.len().min(b.len());
        if a[..n] > b[..n] {
            return Err(format!("the range is empty ({a} comes after {b})"));
        }
    }
    Ok((from, to))
}

/// For `--sort typicality`, the games' typicality ranks from the plans of the search's
/// structure (`engine::plans`), put into the search; nothing for another order.
pub fn rank_typical(conn: &Snapshot, filters: &Filters, search: &mut Search) -> Result<()> {
    if search.order.key == SortKey::Typicality {
        search.typical = crate::engine::plans::typical_games(
            conn,
            filters,
            crate::engine::parallel::threads(None),
        )?;
    }
    Ok(())
}
