-- exact-structure: Exactly this pawn structure: parameters :white_pawns and :black_pawns (bitboards, a1 = bit 0).
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
--   WHERE white_pawns = :white_pawns AND black_pawns = :black_pawns
--   ORDER BY game_id, ply;
--
-- Example, the structure after 1. e4 e5 (sqlite3 shell: .param set NAME VALUE first):
--   pawndex query exact-structure --param white_pawns=0x1000EF00 --param black_pawns=0xEF001000000000
WITH matching_white AS (
    SELECT s.id
    FROM pawn_sets AS s
    WHERE s.side = 0
      AND s.pawns = :white_pawns
),
matching_black AS (
    SELECT s.id
    FROM pawn_sets AS s
    WHERE s.side = 1
      AND s.pawns = :black_pawns
),
matching_runs AS (
    SELECT r.game_id, r.first_ply, r.last_ply
    FROM runs AS r
    WHERE r.white_set IN matching_white
      AND r.black_set IN matching_black
)
SELECT r.game_id, n.n AS ply
FROM matching_runs AS r
CROSS JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
ORDER BY r.game_id, r.first_ply, n.n;
