-- Placeholder on the saml branch only: number 0006 is reserved for the users branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the saml branch's 0011 to load).
SELECT 1;
