import type { Json } from "./json";
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
  /** Script name in the dispatch namespace (SCRIPT_NAME_TEMPLATE applied); null: `tenant-<id>-auth`. */
  worker_script_name?: string | null;
}

export type TenantPatch = Partial<Omit<TenantInput, "id" | "deployment_type" | "worker_script_name">>;

/** How a host resolved (PlatformObject.resolveHost). */
export interface HostResolution {
  tenantId: string;
  /** The custom domain that matched, when resolution was by custom domain. */
  customDomain: string | null;
}

/** A custom domain's lifecycle (the reference platform's `status`). */
export type CustomDomainStatus = "pending_verification" | "ready" | "failed";

/** One way to prove control of a domain (`cname`: point the host at the record; `txt`: publish the record at `domain`). */
export interface DomainVerificationMethod {
  name: "cname" | "txt";
  record: string;
  domain?: string;
}

/** The reference platform's `verification` object. */
export interface DomainVerification {
  methods: DomainVerificationMethod[];
  status?: "verified" | "pending" | "failed";
  error_msg?: string;
  last_verified_at?: string;
}

/** The reference platform's `certificate` object (managed certificates only). */
export interface DomainCertificate {
  status?: "provisioning" | "provisioning_failed" | "provisioned" | "renewing_failed";
  error_msg?: string;
  certificate_authority?: "letsencrypt" | "googletrust";
  renews_before?: string;
}

/** What the certificate provider reports about a hostname (the worker's provider, stored by the registry). */
export interface HostnameState {
  /** The provider's handle for the hostname. */
  providerRef: string;
  status: CustomDomainStatus;
  verification: DomainVerification;
  certificate?: DomainCertificate;
  origin_domain_name?: string;
}

/** A custom domain as the management API shows it (the reference platform's `CustomDomain`, SPEC §2.2). */
export interface CustomDomainRecord {
  custom_domain_id: string;
  tenant_id: string;
  domain: string;
  primary: boolean;
  /** The tenant's default custom domain (GET/PATCH /custom-domains/default). */
  is_default?: boolean;
  status: CustomDomainStatus;
  type: "auth0_managed_certs" | "self_managed_certs";
  origin_domain_name?: string;
  verification: DomainVerification;
  certificate?: DomainCertificate;
  custom_client_ip_header?: string | null;
  tls_policy?: string;
  domain_metadata?: Record<string, string>;
  relying_party_identifier?: string;
  created_at: string;
  updated_at: string;
}

/** Fields a write may set (create, or the PATCH subset). */
export interface CustomDomainInput {
  tenant_id: string;
  domain: string;
  type: CustomDomainRecord["type"];
  custom_client_ip_header?: string | null;
  tls_policy?: string;
  domain_metadata?: Record<string, string>;
  relying_party_identifier?: string | null;
}

export type CustomDomainPatch = Partial<Pick<CustomDomainInput, "custom_client_ip_header" | "tls_policy" | "relying_party_identifier">> & {
  /** Merged into the stored metadata; a null value removes a key. */
  domain_metadata?: Record<string, string | null>;
};

/** What a tenant operation does (issue 16). */
export type TenantOperationKind = "provision" | "redeploy" | "upgrade" | "deprovision" | "delete";
export type TenantOperationStatus = "pending" | "running" | "succeeded" | "failed";

/** One step attempt of an operation (the journal's timeline). */
export interface TenantOperationEvent {
  id: string;
  operation_id: string;
  step: string;
  status: "started" | "succeeded" | "failed";
  attempt: number;
  message: string | null;
  duration_ms: number | null;
  detail: { [key: string]: Json } | null;
  created_at: string;
}

/** A row of the operations journal (`tenant_operations`). */
export interface TenantOperation {
  id: string;
  tenant_id: string;
  kind: TenantOperationKind;
  status: TenantOperationStatus;
  from_version: string | null;
  to_version: string | null;
  bundle_configuration: string | null;
  error: string | null;
  requested_by: string | null;
  instance_id: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Present on `GET /operations/{id}`: every step attempt, oldest first. */
  events?: TenantOperationEvent[];
}

/** Filters and page of `GET /tenants/{id}/operations`. */
export interface OperationQuery {
  page: number;
  per_page: number;
  kind?: TenantOperationKind;
  status?: TenantOperationStatus;
}
