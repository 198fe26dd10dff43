-- pawndex schema, version 4: every position's named pawn structure, and where it changes.
--
-- The catalogue (`structures/*.toml`, or the folder named by PAWNDEX_STRUCTURES) names a
-- structure from the two sides' pawns alone, so the name is a property of a run: `runs.structure`
-- holds 0 (no name) or 2 * id + reversed, where id is the row of `structure_names` and
-- reversed is 1 for the colour-reversed form. The runs were classified with the catalogue
-- whose fingerprint (its rules in match order) is in `structure_catalogue`; a pawndex whose
-- catalogue differs re-classifies the runs and rebuilds `structure_changes` when it next
-- writes the database (`pawndex index` or `pawndex migrate`), from the stored pawns and moves.
--
-- This migration only creates the tables: pawndex classifies the existing runs in the same
-- transaction, right after it.

CREATE TABLE structure_names (
    id          INTEGER PRIMARY KEY,
    key         TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    family      TEXT NOT NULL,
    description TEXT NOT NULL,
    -- 1 when the colour-reversed form is looked for too
    reversed    INTEGER NOT NULL
);

-- One row: the fingerprint of the catalogue the runs were classified with.
CREATE TABLE structure_catalogue (fingerprint TEXT NOT NULL);
INSERT INTO structure_catalogue VALUES ('');

ALTER TABLE runs ADD COLUMN structure INTEGER NOT NULL DEFAULT 0;

-- One row per ply where a game's named structure differs from the ply before (and at ply 0
-- when the game starts in a named structure): codes as in runs.structure, and the move that
-- made the change, in SAN with its check mark (NULL at ply 0).
CREATE TABLE structure_changes (
    game_id        INTEGER NOT NULL,
    ply            INTEGER NOT NULL,
    from_structure INTEGER NOT NULL,
    to_structure   INTEGER NOT NULL,
    move           TEXT,
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;
-- No index on to_structure: the table is small (about 4 rows per game; 1.3 million on the
-- 327,605 master games), a scan of it takes tens of milliseconds, and an index would cost
-- every index run a B-tree insert per change.

-- The changes with the structures by key: one row per change.
CREATE VIEW structure_transitions AS
SELECT
    c.game_id             AS game_id,
    c.ply                 AS ply,
    f.key                 AS from_structure,
    c.from_structure & 1  AS from_reversed,
    t.key                 AS to_structure,
    c.to_structure & 1    AS to_reversed,
    c.move                AS move
FROM structure_changes AS c
LEFT JOIN structure_names AS f ON f.id = c.from_structure >> 1
LEFT JOIN structure_names AS t ON t.id = c.to_structure >> 1;

DROP VIEW ply_features;
-- LEFT JOINs: a query that uses no column of one side's set (or of the structure) skips that
-- lookup (every run's sets exist, so the rows are those of inner joins).
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
    4294967295 - r.missing            AS pieceset,
    s.key                             AS structure,
    r.structure & 1                   AS structure_reversed
FROM runs AS r
JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
LEFT JOIN pawn_sets AS w ON w.id = r.white_set
LEFT JOIN pawn_sets AS b ON b.id = r.black_set
LEFT JOIN structure_names AS s ON s.id = r.structure >> 1;
