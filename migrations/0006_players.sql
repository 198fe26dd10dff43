-- pawndex schema, version 6: the players' names, looked up by index, and the results of every
-- named structure by side, rating and time class (the baselines of `pawndex player`).
--
-- This migration only creates the tables: pawndex fills them from the stored games in the same
-- transaction, right after it (src/store/schema/players.rs: the names are folded by the rule of
-- src/model/players.rs), and `pawndex index` keeps them current as it stores games.

-- Every spelling of a name as stored in games.white and games.black, with its folded form (no
-- accents, no case, docs/players.md) and its surname (the folded part before the first comma,
-- all of it without one), its games and what they say of it.
CREATE TABLE player_names (
    name        TEXT PRIMARY KEY,
    folded      TEXT NOT NULL,
    surname     TEXT NOT NULL,
    -- games with this spelling as White or Black, and of them as White and as Black
    games       INTEGER NOT NULL,
    white_games INTEGER NOT NULL,
    black_games INTEGER NOT NULL,
    -- years of those games' Date tags (NULL when none has a year)
    first_year  INTEGER,
    last_year   INTEGER,
    -- the ratings this spelling's player had in them (NULL when none)
    min_elo     INTEGER,
    max_elo     INTEGER
) WITHOUT ROWID;
CREATE INDEX player_names_surname ON player_names(surname);

-- A player's games, by name.
CREATE INDEX games_white ON games(white);
CREATE INDEX games_black ON games(black);

-- Per named structure form (code 2 * structure_names.id + reversed, as runs.structure), side
-- (0 White, 1 Black), that side's rating (0 when the game has none for it) and the game's time
-- class: the games reaching the form (one position in it at least), and of them the side's
-- wins, draws and losses (only 1-0, 1/2-1/2 and 0-1 are results). Rebuilt when the runs are
-- re-classified with another catalogue.
CREATE TABLE structure_results (
    structure  INTEGER NOT NULL,
    side       INTEGER NOT NULL,
    elo        INTEGER NOT NULL,
    time_class TEXT NOT NULL,
    games      INTEGER NOT NULL,
    wins       INTEGER NOT NULL,
    draws      INTEGER NOT NULL,
    losses     INTEGER NOT NULL,
    PRIMARY KEY (structure, side, elo, time_class)
) WITHOUT ROWID;
