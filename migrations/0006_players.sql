-- pawndex schema, version 6: the players' names, looked up by index, and the results of every
-- named structure by side, rating and time class (the baselines of `pawndex player`).
--
-- This migration only creates the tables: pawndex fills them from the stored games in the same
-- transaction, right after it (src/store/schema/players.rs: the names are folded by the rule of
-- src/model/players.rs), and `pawndex index` keeps them current as it stores games.
--
-- The comments stay outside the statements: SQLite keeps a statement's text in the schema, on
-- the first page, which must keep room for the indexes a first load lays out.

-- player_names: every spelling of a name as stored in games.white and games.black (`name`), its
-- folded form (no accents, no case: docs/players.md) and its surname (the folded part before the
-- first comma, all of it without one); its games as White plus as Black (`games`), as White and
-- as Black; the first and last year of their Date tags, and the lowest and highest rating it had
-- in them (NULL when none).
-- Keyed by surname first: a typed name's spellings are one range of the key. Columns are
-- written briefly, without NOT NULL (pawndex writes every row), for the first page's room.
CREATE TABLE player_names (surname TEXT, name TEXT, folded TEXT, games INT, white_games INT,
black_games INT, first_year INT, last_year INT, min_elo INT, max_elo INT,
PRIMARY KEY (surname, name)) WITHOUT ROWID;

-- A player's games, by name; with the ECO code, so that a player's openings are counted from
-- the index alone. A first load builds them at its end (one sort each).
CREATE INDEX games_white ON games(white, eco);
CREATE INDEX games_black ON games(black, eco);

-- structure_results: per named structure form (`structure`: the code 2 * structure_names.id +
-- reversed of runs.structure), side (0 White, 1 Black), that side's rating (`elo`, 0 when the
-- game has none for it) and the game's time class, the games reaching the form (one position in
-- it at least), and of them that side's wins, draws and losses (only 1-0, 1/2-1/2 and 0-1 are
-- results). Rebuilt when the runs are re-classified with another catalogue.
CREATE TABLE structure_results (structure INT, side INT, elo INT, time_class TEXT, games INT,
wins INT, draws INT, losses INT, PRIMARY KEY (structure, side, elo, time_class)) WITHOUT ROWID;

-- The two views again, the same columns from the same joins, written without the alignment
-- spaces of version 4 (their text, kept in the schema, took the first page's room).
DROP VIEW ply_features;
CREATE VIEW ply_features AS SELECT r.game_id AS game_id, n.n AS ply, w.pawns AS white_pawns,
b.pawns AS black_pawns, w.islands AS white_islands, b.islands AS black_islands, w.dispersion AS
white_dispersion, b.dispersion AS black_dispersion, w.distortion AS white_distortion,
b.distortion AS black_distortion, w.duo AS white_duo, b.duo AS black_duo, w.trio AS white_trio,
b.trio AS black_trio, w.quart AS white_quart, b.quart AS black_quart, r.bishop_pairs & 1 AS
white_bishop_pair, r.bishop_pairs >> 1 AS black_bishop_pair, 4294967295 - r.missing AS
pieceset, s.key AS structure, r.structure & 1 AS structure_reversed FROM runs AS r JOIN
ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply LEFT JOIN pawn_sets AS w ON w.id =
r.white_set LEFT JOIN pawn_sets AS b ON b.id = r.black_set LEFT JOIN structure_names AS s ON
s.id = r.structure >> 1;
DROP VIEW structure_transitions;
CREATE VIEW structure_transitions AS SELECT c.game_id AS game_id, c.ply AS ply, f.key AS
from_structure, c.from_structure & 1 AS from_reversed, t.key AS to_structure, c.to_structure &
1 AS to_reversed, c.move AS move FROM structure_changes AS c LEFT JOIN structure_names AS f ON
f.id = c.from_structure >> 1 LEFT JOIN structure_names AS t ON t.id = c.to_structure >> 1;
