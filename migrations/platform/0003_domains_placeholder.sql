-- PLACEHOLDER on branch `deploy` only: platform 0003 is reserved for the custom-domains work (issue 15,
-- branch `domains`). At merge, drop this file and its list entry and keep the domains branch's 0003.
CREATE TABLE IF NOT EXISTS _placeholder_0003 (id INTEGER PRIMARY KEY);
DROP TABLE _placeholder_0003;
