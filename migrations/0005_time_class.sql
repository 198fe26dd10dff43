-- pawndex schema, version 5: each game's TimeControl tag and time class.
--
-- games.time_control holds the TimeControl tag as read (NULL when the game has none, and for
-- every game indexed before this version: pawndex did not keep the tag then). games.time_class
-- is one of classical, rapid, blitz, bullet, simul, blindfold, unknown: the rule of
-- src/model/time_class.rs (docs/find.md, "Time class"), from the TimeControl tag, else from
-- the words of the Event tag. The games already stored get their class from their Event alone
-- (pawndex_time_class, a function pawndex adds to the connection that migrates).

ALTER TABLE games ADD COLUMN time_control TEXT;
ALTER TABLE games ADD COLUMN time_class TEXT NOT NULL DEFAULT 'unknown';
UPDATE games SET time_class = pawndex_time_class(NULL, event)
WHERE pawndex_time_class(NULL, event) != 'unknown';

-- One row: the first game id whose TimeControl tag was stored (the games before it were
-- indexed by a pawndex of version 4 or older; re-index them to use their TimeControl).
CREATE TABLE time_control_stored (from_game INTEGER NOT NULL);
INSERT INTO time_control_stored SELECT coalesce(max(id), 0) + 1 FROM games;
