-- Placeholder on the mfa branch only: number 0006 is reserved for the users branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the mfa branch's 0008 to load).
SELECT 1;
