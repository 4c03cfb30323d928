-- PLACEHOLDER on branch `deploy` only: tenant 0014 is reserved for the custom-domains work (issue 15). At
-- merge, drop this file and its list entry and keep that branch's 0014.
CREATE TABLE IF NOT EXISTS _placeholder_0014 (id INTEGER PRIMARY KEY);
DROP TABLE _placeholder_0014;
