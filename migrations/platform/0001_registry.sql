-- The registry: tenants, custom domains, proxy routes and the tenant operations journal (SPEC §2.1-2.3, §2.12).
-- Times are integer epoch milliseconds throughout.
CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  friendly_name TEXT,
  audience TEXT,
  sender_name TEXT,
  sender_email TEXT,
  deployment_type TEXT NOT NULL DEFAULT 'shared' CHECK (deployment_type IN ('shared', 'wfp')),
  provisioning_state TEXT NOT NULL DEFAULT 'ready' CHECK (provisioning_state IN ('pending', 'ready', 'failed')),
  provisioning_error TEXT,
  provisioning_state_changed_at INTEGER NOT NULL,
  bundle_configuration TEXT NOT NULL DEFAULT 'default',
  worker_version TEXT NOT NULL DEFAULT 'current',
  worker_script_name TEXT,
  storage_kind TEXT NOT NULL DEFAULT 'own_d1' CHECK (storage_kind IN ('own_d1', 'existing_d1', 'shared_planetscale')),
  d1_database_id TEXT,
  is_seeded INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX tenants_by_created ON tenants (created_at DESC, id DESC);

CREATE TABLE custom_domains (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  domain TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX custom_domains_by_tenant ON custom_domains (tenant_id);

CREATE TABLE proxy_routes (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  custom_domain_id TEXT REFERENCES custom_domains (id) ON DELETE CASCADE,
  priority INTEGER NOT NULL DEFAULT 0,
  match TEXT NOT NULL DEFAULT '{}',
  handlers TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX proxy_routes_by_domain ON proxy_routes (custom_domain_id, priority);

CREATE TABLE tenant_operations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX tenant_operations_by_tenant ON tenant_operations (tenant_id, created_at DESC);

CREATE TABLE tenant_operation_events (
  id TEXT PRIMARY KEY,
  operation_id TEXT NOT NULL REFERENCES tenant_operations (id) ON DELETE CASCADE,
  step TEXT NOT NULL,
  status TEXT NOT NULL,
  message TEXT,
  created_at INTEGER NOT NULL
);
