-- PLACEHOLDER on branch `deploy` only: tenant 0013 is reserved for the import work (issue 14). At merge,
-- drop this file and its list entry and keep that branch's 0013.
CREATE TABLE IF NOT EXISTS _placeholder_0013 (id INTEGER PRIMARY KEY);
DROP TABLE _placeholder_0013;
