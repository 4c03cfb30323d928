-- Placeholder on the actions branch only: number 0008 is reserved for the mfa branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the actions branch's 0009 to load).
SELECT 1;
