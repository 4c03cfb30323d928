-- Placeholder on the saml branch only: number 0008 is reserved for the mfa branch's migration, which replaces
-- this file when both are merged (the list must stay contiguous for the saml branch's 0011 to load).
SELECT 1;
