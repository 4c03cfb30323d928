-- Placeholder on branch `pages` only: the real 0020 belongs to another branch (the list must be contiguous).
-- At merge this file and its line in src/objects/tenant/core/migrations.ts give way to the real one.
SELECT 1;
