-- black-maroczy-bind: Black has a Maroczy bind: pawns on c5 and e5, no Black d-pawn, no White c-pawn.
--
-- One row per matching position (game_id, ply), ordered by game and ply. The query reads the
-- tables behind the ply_features view: matching_structures are the pawn structures with the
-- feature, matching_runs the runs of positions (stretches of plies with one pawn structure,
-- piece-set and bishop-pair state) that have one of them, and the final SELECT expands each
-- run into its plies. SQLite walks the runs in key order and checks each run's structure
-- against a Bloom filter of matching_structures, the fastest way to every match. For the
-- first rows only (`--limit`), pawndex runs the same query with a lookup per run instead,
--   WHERE EXISTS (SELECT 1 FROM matching_structures AS m WHERE m.id = p.structure_id),
-- which answers at once rather than after reading every structure.
--
-- The same positions from the view (slower: SQLite sorts every match):
--   SELECT game_id, ply FROM ply_features
--   WHERE (black_pawns & 0x0000001400000000) = 0x0000001400000000
--     AND (black_pawns & 0x0808080808080808) = 0
--     AND (white_pawns & 0x0404040404040404) = 0
--   ORDER BY game_id, ply;
WITH matching_structures AS (
    SELECT s.id
    FROM structures AS s
    WHERE (s.black_pawns & 0x0000001400000000) = 0x0000001400000000  -- Black pawns on c5 and e5
      AND (s.black_pawns & 0x0808080808080808) = 0  -- no Black d-pawn
      AND (s.white_pawns & 0x0404040404040404) = 0  -- no White c-pawn
),
matching_runs AS (
    SELECT p.game_id, p.first_ply, p.last_ply
    FROM positions AS p
    JOIN matching_structures AS m ON m.id = p.structure_id
)
SELECT r.game_id, n.n AS ply
FROM matching_runs AS r
JOIN ply_numbers AS n ON n.n BETWEEN r.first_ply AND r.last_ply
ORDER BY r.game_id, r.first_ply, n.n;
