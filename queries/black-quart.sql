-- black-quart: Black has a quart: four or more pawns side by side on one rank.
--
-- One row per matching position (game_id, ply), ordered by game and ply. The query reads the
-- tables behind the ply_features view: matching_white / matching_black are the pawn sets of
-- each side (rows of pawn_sets) with the feature, matching_runs the runs (stretches of plies
-- with the same pawn sets, piece-set and bishop-pair state) that have them, and the final
-- SELECT expands each run into its plies. SQLite walks the runs in key order and checks each
-- run's sets against the matching sets, so the first rows come at once. When the matching
-- sets of one side are rare, pawndex reads the same rows through the inverted index
-- set_games instead (the games that reach one of them), which `pawndex query --print-sql`
-- does not show; `--count` adds up the aggregates in set_totals when it can.
--
-- The same positions from the view (slower: SQLite sorts every match):
--   SELECT game_id, ply FROM ply_features
--   WHERE black_quart != 0
--   ORDER BY game_id, ply;
WITH matching_black AS (
    SELECT s.id
    FROM pawn_sets AS s
    WHERE s.side = 1
      AND s.quart != 0
),
matching_runs AS (
    SELECT r.game_id, r.first_ply, r.last_ply
    FROM runs AS r
    WHERE r.black_set IN matching_black
)
SELECT r.game_id, n.n AS ply
FROM matching_runs AS r
CROSS JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
ORDER BY r.game_id, r.first_ply, n.n;
