-- The tenant's default custom domain (issue 15; the reference platform's GET/PATCH /custom-domains/default):
-- at most one row per tenant has is_default = 1; none means the tenant's canonical domain is the default.
ALTER TABLE custom_domains ADD COLUMN is_default INTEGER NOT NULL DEFAULT 0;
