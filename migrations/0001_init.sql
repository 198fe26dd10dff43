-- pawndex schema, version 1.
--
-- The per-ply contract is the view `ply_features` (one row per game and ply). Behind it, plies
-- are stored as runs: a row of `positions` covers the plies first_ply..=last_ply of one game
-- during which the pawn structure, the piece-set and the bishop-pair flags stay the same, and
-- each distinct pawn structure is stored once in `structures` with its features.

CREATE TABLE games (
    id         INTEGER PRIMARY KEY,
    event      TEXT,
    site       TEXT,
    date       TEXT,
    round      TEXT,
    white      TEXT,
    black      TEXT,
    result     TEXT,
    white_elo  INTEGER,
    black_elo  INTEGER,
    eco        TEXT,
    plies      INTEGER NOT NULL,
    source     TEXT NOT NULL,
    offset     INTEGER NOT NULL,
    -- start position as FEN; NULL for the standard start
    fen        TEXT,
    chess960   INTEGER NOT NULL DEFAULT 0,
    -- mainline, 2 bytes per ply, little-endian from | to << 6 | promotion << 12
    moves      BLOB NOT NULL,
    -- FNV-1a of the seven-tag roster, start position and moves: duplicate detection
    hash       INTEGER NOT NULL
);
CREATE INDEX games_hash ON games(hash);

CREATE TABLE structures (
    id               INTEGER PRIMARY KEY,
    white_pawns      INTEGER NOT NULL,
    black_pawns      INTEGER NOT NULL,
    white_islands    INTEGER NOT NULL,
    black_islands    INTEGER NOT NULL,
    white_dispersion INTEGER NOT NULL,
    black_dispersion INTEGER NOT NULL,
    white_distortion INTEGER NOT NULL,
    black_distortion INTEGER NOT NULL,
    white_duo        INTEGER NOT NULL,
    black_duo        INTEGER NOT NULL,
    white_trio       INTEGER NOT NULL,
    black_trio       INTEGER NOT NULL,
    white_quart      INTEGER NOT NULL,
    black_quart      INTEGER NOT NULL
);
CREATE UNIQUE INDEX structures_pawns ON structures(white_pawns, black_pawns);
CREATE INDEX structures_white_shape ON structures(white_islands, white_dispersion, white_distortion);
CREATE INDEX structures_black_shape ON structures(black_islands, black_dispersion, black_distortion);

CREATE TABLE positions (
    game_id      INTEGER NOT NULL,
    first_ply    INTEGER NOT NULL,
    last_ply     INTEGER NOT NULL,
    structure_id INTEGER NOT NULL,
    -- pieces of the start list no longer on the board: pieceset = 4294967295 - missing
    -- (stored this way because it is small, usually 0, while the pieceset is large)
    missing      INTEGER NOT NULL,
    -- bit 0: White has the bishop pair, bit 1: Black has it
    bishop_pairs INTEGER NOT NULL,
    PRIMARY KEY (game_id, first_ply)
) WITHOUT ROWID;
CREATE INDEX positions_structure ON positions(structure_id);

-- Per game, what it reached at any ply: answers "games that ever had a white quart" from
-- 1 narrow row per game instead of every position. Flags are 0/1, maxima over all plies.
CREATE TABLE game_summary (
    game_id                   INTEGER PRIMARY KEY,
    any_white_duo             INTEGER NOT NULL,
    any_black_duo             INTEGER NOT NULL,
    any_white_trio            INTEGER NOT NULL,
    any_black_trio            INTEGER NOT NULL,
    any_white_quart           INTEGER NOT NULL,
    any_black_quart           INTEGER NOT NULL,
    any_white_bishop_pair     INTEGER NOT NULL,
    any_black_bishop_pair     INTEGER NOT NULL,
    max_white_islands         INTEGER NOT NULL,
    max_black_islands         INTEGER NOT NULL,
    max_white_dispersion      INTEGER NOT NULL,
    max_black_dispersion      INTEGER NOT NULL,
    max_white_distortion      INTEGER NOT NULL,
    max_black_distortion      INTEGER NOT NULL
);

-- 0, 1, 2, ...: expands a run into its plies (grown on demand to the longest game).
CREATE TABLE ply_numbers (n INTEGER PRIMARY KEY);

CREATE TABLE rejects (
    id      INTEGER PRIMARY KEY,
    source  TEXT NOT NULL,
    offset  INTEGER NOT NULL,
    event   TEXT,
    white   TEXT,
    black   TEXT,
    ply     INTEGER,
    reason  TEXT NOT NULL,
    UNIQUE (source, offset)
);

CREATE VIEW ply_features AS
SELECT
    p.game_id                         AS game_id,
    n.n                               AS ply,
    s.white_pawns                     AS white_pawns,
    s.black_pawns                     AS black_pawns,
    s.white_islands                   AS white_islands,
    s.black_islands                   AS black_islands,
    s.white_dispersion                AS white_dispersion,
    s.black_dispersion                AS black_dispersion,
    s.white_distortion                AS white_distortion,
    s.black_distortion                AS black_distortion,
    s.white_duo                       AS white_duo,
    s.black_duo                       AS black_duo,
    s.white_trio                      AS white_trio,
    s.black_trio                      AS black_trio,
    s.white_quart                     AS white_quart,
    s.black_quart                     AS black_quart,
    p.bishop_pairs & 1                AS white_bishop_pair,
    p.bishop_pairs >> 1               AS black_bishop_pair,
    4294967295 - p.missing            AS pieceset
FROM positions AS p
JOIN structures AS s ON s.id = p.structure_id
JOIN ply_numbers AS n ON n.n BETWEEN p.first_ply AND p.last_ply;
