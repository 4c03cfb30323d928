-- Issue 14: HS256 access tokens per API, as the reference platform allows. The API's signing secret is stored
-- encrypted (AES-GCM bound to the API id, src/shared/crypto/contexts.ts); null for APIs that never had one.
ALTER TABLE resource_servers ADD COLUMN signing_secret_enc TEXT;
