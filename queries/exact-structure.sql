-- exact-structure: Exactly this pawn structure: parameters :white_pawns and :black_pawns (bitboards, a1 = bit 0).
--
-- One row per matching position (game_id, ply), ordered by game and ply. The query reads the
-- tables behind the ply_features view: matching_structures is the one row of the unique index
-- on structures (white_pawns, black_pawns), matching_runs are the runs of positions (stretches
-- of plies with one pawn structure, piece-set and bishop-pair state) that have it, read from
-- the index on positions (structure_id) already in (game_id, first_ply) order, and the final
-- SELECT expands each run into its plies. Rows stream in order, so LIMIT stops early.
--
-- The same positions from the view (slower: SQLite sorts every match):
--   SELECT game_id, ply FROM ply_features
--   WHERE white_pawns = :white_pawns AND black_pawns = :black_pawns
--   ORDER BY game_id, ply;
--
-- Example, the structure after 1. e4 e5 (sqlite3 shell: .param set NAME VALUE first):
--   pawndex query exact-structure --param white_pawns=0x1000EF00 --param black_pawns=0xEF001000000000
WITH matching_structures AS (
    SELECT s.id
    FROM structures AS s
    WHERE s.white_pawns = :white_pawns
      AND s.black_pawns = :black_pawns
),
matching_runs AS (
    SELECT p.game_id, p.first_ply, p.last_ply
    FROM positions AS p
    WHERE p.structure_id = (SELECT id FROM matching_structures)
)
SELECT r.game_id, n.n AS ply
FROM matching_runs AS r
JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
ORDER BY r.game_id, r.first_ply, n.n;
