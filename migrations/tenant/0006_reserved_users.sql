-- Placeholder on the roles branch only: number 0006 is reserved for the users branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the roles branch's 0007 to load).
SELECT 1;
