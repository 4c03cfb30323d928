-- Placeholder on the saml branch only: number 0007 is reserved for the roles branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the saml branch's 0011 to load).
SELECT 1;
