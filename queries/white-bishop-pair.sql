-- white-bishop-pair: White has the bishop pair and Black does not.
--
-- One row per matching position (game_id, ply), ordered by game and ply. The query reads the
-- tables behind the ply_features view: matching_runs are the runs of positions (stretches of
-- plies with one pawn structure, piece-set and bishop-pair state) that match, and the final
-- SELECT expands each run into its plies, in key order so that LIMIT stops early.
--
-- The same positions from the view (slower: SQLite sorts every match):
--   SELECT game_id, ply FROM ply_features
--   WHERE white_bishop_pair = 1 AND black_bishop_pair = 0
--   ORDER BY game_id, ply;
WITH matching_runs AS (
    SELECT p.game_id, p.first_ply, p.last_ply
    FROM positions AS p
    WHERE p.bishop_pairs = 1  -- bit 0: White has the pair, bit 1: Black has it
)
SELECT r.game_id, n.n AS ply
FROM matching_runs AS r
JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
ORDER BY r.game_id, r.first_ply, n.n;
