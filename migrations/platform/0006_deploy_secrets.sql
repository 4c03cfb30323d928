-- The secrets a per-tenant copy is provisioned with (issue 16): ENCRYPTION_KEY and CONTROL_PLANE_CLIENT_SECRET,
-- generated once per tenant. Kept here, sealed under the control plane's ENCRYPTION_KEY (context
-- `tenant_deploy_secret:<tenant_id>:<name>`), because a namespace never reads a secret back: a staged slot of
-- an upgrade must get the same values, and the control plane manages a copy with its client secret.
CREATE TABLE tenant_deploy_secrets (
  tenant_id TEXT NOT NULL,
  name TEXT NOT NULL,
  ciphertext TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
