//! The SQL of the side features, from the one list
//! ([`SIDE_FEATURES`](crate::model::features::SIDE_FEATURES)): the writer, the dump and
//! `check` name their `pawn_sets` columns through these, and the migrations can compute any
//! feature of the list in SQL, so a new feature needs no edit here.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

use crate::model::features::{Feature, SIDE_FEATURES, SideFeatures};

/// The SQL function `pawndex_side_feature(name, side, pawns)` that [`register_kernels`] adds.
pub const KERNEL_FUNCTION: &str = "pawndex_side_feature";

/// Adds the SQL function [`KERNEL_FUNCTION`]`(name, side, pawns)` to `conn`: the value of the
/// side feature `name` of the pawns `pawns` (a bitboard) of `side` (0 White, 1 Black), as the
/// indexer stores it. A migration that adds a feature fills its `pawn_sets` column with it:
///
/// ```sql
/// ALTER TABLE pawn_sets ADD COLUMN doubled INTEGER NOT NULL DEFAULT 0;
/// UPDATE pawn_sets SET doubled = pawndex_side_feature('doubled', side, pawns);
/// ```
///
/// An unknown name or a side other than 0 or 1 is an SQL error that names it.
pub fn register_kernels(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        KERNEL_FUNCTION,
        3,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let name: String = ctx.get(0)?;
            let side: i64 = ctx.get(1)?;
            let pawns = ctx.get::<i64>(2)? as u64;
            let fail = |why: String| rusqlite::Error::UserFunctionError(why.into());
            let feature = Feature::parse(&name)
                .ok_or_else(|| fail(format!("{KERNEL_FUNCTION}: no side feature {name:?}")))?;
            let features = match side {
                0 => SideFeatures::white(pawns),
                1 => SideFeatures::black(pawns),
                _ => {
                    return Err(fail(format!(
                        "{KERNEL_FUNCTION}: side {side} is not 0 or 1"
                    )));
                }
            };
            // A bitboard is stored as the i64 of the same bits.
            Ok(feature.of(&features) as i64)
        },
    )
}

/// The feature columns of `pawn_sets`, each prefixed with `alias.` when `alias` is not empty:
/// `islands, dispersion, …` or `w.islands, w.dispersion, …`.
#[must_use]
pub fn features(alias: &str) -> String {
    let dot = if alias.is_empty() { "" } else { "." };
    SIDE_FEATURES
        .iter()
        .map(|f| format!("{alias}{dot}{}", f.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every column of `pawn_sets` as the writer fills it: `id, side, pawns, islands, …`.
#[must_use]
pub fn pawn_sets() -> String {
    format!("id, side, pawns, {}", features(""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::columns::{self, Column};
    use crate::model::game::GameSummary;

    /// The columns of a table or view of a database made by the migrations.
    fn columns_of(table: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_for_writing(&dir.path().join("t.db")).unwrap();
        let mut st = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// The kernels in SQL give the stored values, and refuse what they cannot compute.
    #[test]
    fn kernels_in_sql() {
        let conn = Connection::open_in_memory().unwrap();
        register_kernels(&conn).unwrap();
        let value = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0));
        // The start position: one island, dispersion 5, a quart on rank 2 (0xff00).
        assert_eq!(
            value("SELECT pawndex_side_feature('islands', 0, 65280)").unwrap(),
            1
        );
        assert_eq!(
            value("SELECT pawndex_side_feature('Dispersion', 1, 65280)").unwrap(),
            5
        );
        assert_eq!(
            value("SELECT pawndex_side_feature('quart', 0, 65280)").unwrap(),
            65280
        );
        let err = value("SELECT pawndex_side_feature('islandz', 0, 1)").unwrap_err();
        assert!(
            err.to_string().contains("no side feature \"islandz\""),
            "{err}"
        );
        let err = value("SELECT pawndex_side_feature('duo', 2, 1)").unwrap_err();
        assert!(err.to_string().contains("side 2 is not 0 or 1"), "{err}");
    }

    /// The migrations and the one list agree: a new side feature's migration must add its
    /// `pawn_sets` and `game_summary` columns and put it in `ply_features` where the list says.
    #[test]
    fn the_schema_follows_the_list() {
        let view: Vec<String> = columns::ply_features()
            .into_iter()
            .map(Column::name)
            .collect();
        assert_eq!(columns_of("ply_features"), view);
        let sets = columns_of("pawn_sets");
        assert_eq!(sets.join(", "), pawn_sets());
        let summary = columns_of("game_summary");
        assert_eq!(summary[0], "game_id");
        let mut want = GameSummary::columns();
        let mut have = summary[1..].to_vec();
        want.sort();
        have.sort();
        assert_eq!(have, want);
    }

    #[test]
    fn lists_in_order() {
        assert_eq!(
            features("w"),
            "w.islands, w.dispersion, w.distortion, w.duo, w.trio, w.quart"
        );
        assert_eq!(
            pawn_sets(),
            "id, side, pawns, islands, dispersion, distortion, duo, trio, quart"
        );
    }
}
