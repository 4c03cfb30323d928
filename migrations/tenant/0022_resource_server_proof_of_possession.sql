-- Issue 33 point 4: per API, a setting that requires sender-constrained (DPoP-bound) access tokens, the
-- reference platform's `proof_of_possession` ({ mechanism, required }) as JSON; NULL when the API has none.
ALTER TABLE resource_servers ADD COLUMN proof_of_possession TEXT;
