-- Placeholder on the cleanup branch only: number 0008 is reserved for the mfa branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the cleanup branch's 0010 to load).
SELECT 1;
