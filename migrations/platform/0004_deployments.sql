-- Per-tenant deployments (issue 16; SPEC §2.1, §3.1, §9, "Per-tenant deployment details").
-- The operations journal: one row per provisioning / redeploy / upgrade / deprovision, one event per step
-- attempt (started, succeeded, failed) with timings and errors. Times are epoch milliseconds.
ALTER TABLE tenant_operations ADD COLUMN from_version TEXT;
ALTER TABLE tenant_operations ADD COLUMN to_version TEXT;
ALTER TABLE tenant_operations ADD COLUMN bundle_configuration TEXT;
ALTER TABLE tenant_operations ADD COLUMN error TEXT;
ALTER TABLE tenant_operations ADD COLUMN started_at INTEGER;
ALTER TABLE tenant_operations ADD COLUMN finished_at INTEGER;
ALTER TABLE tenant_operations ADD COLUMN requested_by TEXT;
-- The durable executor's instance (a Workflow instance id), so a restart can find and resume it.
ALTER TABLE tenant_operations ADD COLUMN instance_id TEXT;
CREATE INDEX tenant_operations_by_status ON tenant_operations (tenant_id, status, created_at DESC);

ALTER TABLE tenant_operation_events ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tenant_operation_events ADD COLUMN duration_ms INTEGER;
ALTER TABLE tenant_operation_events ADD COLUMN detail TEXT;
CREATE INDEX tenant_operation_events_by_operation ON tenant_operation_events (operation_id, created_at, id);

-- Routes that apply to every host of a tenant have no custom_domain_id: index them by tenant.
CREATE INDEX proxy_routes_by_tenant ON proxy_routes (tenant_id, priority);

