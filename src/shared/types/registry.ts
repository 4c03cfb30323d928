/** Registry records (PlatformObject). */

/** A tenant as the management API shows it (SPEC §2.1). */
export interface Tenant {
  id: string;
  name: string;
  friendly_name: string | null;
  audience: string | null;
  sender_name: string | null;
  sender_email: string | null;
  deployment_type: "shared" | "wfp";
  provisioning_state: "pending" | "ready" | "failed";
  provisioning_error: string | null;
  provisioning_state_changed_at: string;
  bundle_configuration: string;
  worker_version: string;
  worker_script_name: string;
  storage_kind: "own_d1" | "existing_d1" | "shared_planetscale";
  d1_database_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Fields a caller may set on create (id optional: generated when absent). */
export interface TenantInput {
  id: string;
  name: string;
  friendly_name?: string | null;
  audience?: string | null;
  sender_name?: string | null;
  sender_email?: string | null;
  deployment_type?: "shared" | "wfp";
  storage_kind?: Tenant["storage_kind"];
  bundle_configuration?: string;
  worker_version?: string;
}

export type TenantPatch = Partial<Omit<TenantInput, "id" | "deployment_type">>;

/** How a host resolved (PlatformObject.resolveHost). */
export interface HostResolution {
  tenantId: string;
  /** The custom domain that matched, when resolution was by custom domain. */
  customDomain: string | null;
}
