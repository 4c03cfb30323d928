import { z } from "zod";

/**
 * Ids that would shadow a management route (`/tenants/settings` is the reference platform's tenant settings)
 * or a well-known host label.
 */
export const RESERVED_TENANT_IDS = ["settings", "operations", "api", "www", "login", "auth", "localhost"] as const;

/**
 * A tenant id doubles as a subdomain label (`{tenant_id}.{issuer host}`), so it is a valid DNS label
 * (RFC 1123: letters, digits and inner hyphens) and never a confusable one (issue 6): not `localhost`,
 * not an IDNA A-label (`xn--`), which could render as another tenant's name.
 */
export const tenantId = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/,
    "id must be 2-63 lowercase letters, digits or hyphens, starting and ending with a letter or digit",
  )
  .refine((id) => !id.startsWith("xn--"), "id must not start with xn-- (internationalized labels are confusable)")
  .refine((id) => !(RESERVED_TENANT_IDS as readonly string[]).includes(id), "id is reserved");

/**
 * Whether an id would read as the control plane's: the same once `-` and `_` are ignored
 * (`control-plane` beside `control_plane`).
 */
export const confusableWith = (id: string, controlPlaneId: string) =>
  id.replace(/[-_]/g, "") === controlPlaneId.toLowerCase().replace(/[-_]/g, "");

const text = (max: number) => z.string().trim().min(1).max(max);

/** POST /api/v2/tenants (SPEC §2.1, §4.2). Unknown properties are refused. */
export const createTenantBody = z.strictObject({
  id: tenantId,
  name: text(255).optional(),
  friendly_name: text(255).optional(),
  audience: z.url().max(2048).optional(),
  sender_name: text(255).optional(),
  sender_email: z.email().max(320).optional(),
  deployment_type: z.enum(["shared", "wfp"]).optional(),
  storage_kind: z.enum(["own_d1", "existing_d1", "shared_planetscale"]).optional(),
  bundle_configuration: text(128).optional(),
  worker_version: text(128).optional(),
});

/** PATCH /api/v2/tenants/{id}: the same fields, all optional, id and deployment type immutable. */
export const updateTenantBody = z
  .strictObject({
    name: text(255),
    friendly_name: text(255).nullable(),
    audience: z.url().max(2048).nullable(),
    sender_name: text(255).nullable(),
    sender_email: z.email().max(320).nullable(),
    storage_kind: z.enum(["own_d1", "existing_d1", "shared_planetscale"]),
    bundle_configuration: text(128),
    worker_version: text(128),
  })
  .partial()
  .refine((patch) => Object.keys(patch).length > 0, "At least one property must be provided");

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
  /** Script name in the dispatch namespace (SCRIPT_NAME_TEMPLATE applied); null: `tenant-<id>-auth`. */
  worker_script_name?: string | null;
}

export type TenantPatch = Partial<Omit<TenantInput, "id" | "deployment_type" | "worker_script_name">>;
