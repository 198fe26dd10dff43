-- pawndex schema, version 3: appends leave a bounded tail of games out of the derived tables.
--
-- The derived tables (`set_games`, `set_totals`, `bishop_totals`) cover the games with
-- id <= derived.through. Merging a few thousand new games into them rewrites pages all over
-- those tables (the sets a week of games reaches are spread over every id), so an append costs
-- what the database holds, not what it adds. Since version 3 a run that adds few games compared
-- with the database leaves them above `through`, in the *unmerged tail*: readers already read
-- the games above `through` from `runs` themselves. A later run merges the tail once it is no
-- longer small (see `src/store/derive.rs`); `pawndex migrate` merges it at once.
--
-- `finished` tells the two states apart: the last game stored by a run that completed. Games
-- above `through` but not above `finished` are the tail, by design; games above `finished` were
-- stored by a run that was killed (the database is *unfinished*, and says what to run).
ALTER TABLE derived ADD COLUMN finished INTEGER NOT NULL DEFAULT 0;
UPDATE derived SET finished = through;
