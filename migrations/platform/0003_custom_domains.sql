-- Custom domains in the reference platform's shape (issue 15; SPEC §2.2, §4.2): status, verification
-- records, certificate state and the certificate provider's handle. Rows that existed before routed at once,
-- so they stay `ready`. Domains are stored lowercased; the unique index on lower(domain) makes the claim
-- case-insensitive even for a row written by an older release.
ALTER TABLE custom_domains ADD COLUMN status TEXT NOT NULL DEFAULT 'ready'
  CHECK (status IN ('pending_verification', 'ready', 'failed'));
ALTER TABLE custom_domains ADD COLUMN verification TEXT;
ALTER TABLE custom_domains ADD COLUMN certificate TEXT;
ALTER TABLE custom_domains ADD COLUMN origin_domain_name TEXT;
ALTER TABLE custom_domains ADD COLUMN custom_client_ip_header TEXT;
ALTER TABLE custom_domains ADD COLUMN tls_policy TEXT;
ALTER TABLE custom_domains ADD COLUMN domain_metadata TEXT;
ALTER TABLE custom_domains ADD COLUMN relying_party_identifier TEXT;
-- The provider's id for the hostname (Cloudflare for SaaS custom hostname id; `local:` for the local provider).
ALTER TABLE custom_domains ADD COLUMN provider_ref TEXT;
CREATE UNIQUE INDEX custom_domains_domain_ci ON custom_domains (lower(domain));
