-- pawndex schema, version 2: per-side pawn sets, lean runs, an inverted index and aggregates.
--
-- Every feature except the bishop pair and the piece-set is a function of one side's pawns, so
-- each distinct pawn set of one side is stored once in `pawn_sets` with its features; a run of
-- plies names its White set and its Black set. Version 1 stored every (White, Black) pair of
-- pawn sets with both sides' features (ten times as many rows) and indexed every run.
--
-- Derived tables (`set_games`, `set_totals`) are built after the games they describe, for the
-- games with id above `derived.through`, by the `pawndex index` run that stored them; readers
-- read the few games above it (a run killed before the build) from `runs` themselves, so they
-- answer right, only slower, and say what to run.
--
-- This migration converts a version-1 database in place, inside one transaction: a kill at any
-- moment leaves the old database or the new one.

CREATE TABLE pawn_sets (
    id          INTEGER PRIMARY KEY,
    -- 0: White's pawns, 1: Black's pawns
    side        INTEGER NOT NULL,
    -- bitboard, a1 = bit 0
    pawns       INTEGER NOT NULL,
    islands     INTEGER NOT NULL,
    dispersion  INTEGER NOT NULL,
    distortion  INTEGER NOT NULL,
    duo         INTEGER NOT NULL,
    trio        INTEGER NOT NULL,
    quart       INTEGER NOT NULL
);
CREATE UNIQUE INDEX pawn_sets_key ON pawn_sets(pawns, side);

CREATE TABLE runs (
    game_id      INTEGER NOT NULL,
    first_ply    INTEGER NOT NULL,
    last_ply     INTEGER NOT NULL,
    white_set    INTEGER NOT NULL,
    black_set    INTEGER NOT NULL,
    -- pieces of the start list no longer on the board: pieceset = 4294967295 - missing
    missing      INTEGER NOT NULL,
    -- bit 0: White has the bishop pair, bit 1: Black has it
    bishop_pairs INTEGER NOT NULL,
    PRIMARY KEY (game_id, first_ply)
) WITHOUT ROWID;

-- Which games reach a pawn set (of either side), for the games with id <= derived.through:
-- an inverted index, one row per set. `games` holds the ascending game ids as LEB128 varints of
-- the differences (the first from 0), `last_game` the last of them (appends continue from it).
-- Inside a game a pawn set occupies one stretch of plies (pawn moves cannot be undone), so its
-- runs there are found by the game's key in `runs`.
CREATE TABLE set_games (
    set_id    INTEGER PRIMARY KEY,
    last_game INTEGER NOT NULL,
    games     BLOB NOT NULL
);

-- Per pawn set, over the games with id <= derived.through: the positions (plies) with that
-- set, the games that reach it, and of the positions, the ones by result (only 1-0, 1/2-1/2
-- and 0-1 are results) and the Elo sums and counts of the ones whose player has a rating.
CREATE TABLE set_totals (
    set_id              INTEGER PRIMARY KEY,
    positions           INTEGER NOT NULL,
    games               INTEGER NOT NULL,
    white_wins          INTEGER NOT NULL,
    draws               INTEGER NOT NULL,
    black_wins          INTEGER NOT NULL,
    white_elo_sum       INTEGER NOT NULL,
    white_elo_positions INTEGER NOT NULL,
    black_elo_sum       INTEGER NOT NULL,
    black_elo_positions INTEGER NOT NULL
);

-- Positions by bishop-pair state (bit 0: White has the pair, bit 1: Black has it), over the
-- games with id <= derived.through.
CREATE TABLE bishop_totals (
    bishop_pairs INTEGER PRIMARY KEY,
    positions    INTEGER NOT NULL
);

-- The derived tables cover the games with id <= through (one row).
CREATE TABLE derived (through INTEGER NOT NULL);
INSERT INTO derived VALUES (0);

-- Version 1 data, converted.
INSERT INTO pawn_sets (side, pawns, islands, dispersion, distortion, duo, trio, quart)
SELECT 0, white_pawns, white_islands, white_dispersion, white_distortion, white_duo, white_trio,
       white_quart
FROM structures GROUP BY white_pawns ORDER BY min(id);
INSERT INTO pawn_sets (side, pawns, islands, dispersion, distortion, duo, trio, quart)
SELECT 1, black_pawns, black_islands, black_dispersion, black_distortion, black_duo, black_trio,
       black_quart
FROM structures GROUP BY black_pawns ORDER BY min(id);

INSERT INTO runs
SELECT p.game_id, p.first_ply, p.last_ply, w.id, b.id, p.missing, p.bishop_pairs
FROM positions AS p
JOIN structures AS s ON s.id = p.structure_id
JOIN pawn_sets AS w ON w.pawns = s.white_pawns AND w.side = 0
JOIN pawn_sets AS b ON b.pawns = s.black_pawns AND b.side = 1
ORDER BY p.game_id, p.first_ply;

DROP VIEW ply_features;
DROP TABLE positions;
DROP TABLE structures;
DROP TABLE IF EXISTS deferred_indexes;

-- LEFT JOINs: a query that uses no column of one side's set skips that lookup (every run's
-- sets exist, so the rows are those of inner joins).
CREATE VIEW ply_features AS
SELECT
    r.game_id                         AS game_id,
    n.n                               AS ply,
    w.pawns                           AS white_pawns,
    b.pawns                           AS black_pawns,
    w.islands                         AS white_islands,
    b.islands                         AS black_islands,
    w.dispersion                      AS white_dispersion,
    b.dispersion                      AS black_dispersion,
    w.distortion                      AS white_distortion,
    b.distortion                      AS black_distortion,
    w.duo                             AS white_duo,
    b.duo                             AS black_duo,
    w.trio                            AS white_trio,
    b.trio                            AS black_trio,
    w.quart                           AS white_quart,
    b.quart                           AS black_quart,
    r.bishop_pairs & 1                AS white_bishop_pair,
    r.bishop_pairs >> 1               AS black_bishop_pair,
    4294967295 - r.missing            AS pieceset
FROM runs AS r
JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
LEFT JOIN pawn_sets AS w ON w.id = r.white_set
LEFT JOIN pawn_sets AS b ON b.id = r.black_set;
