import type { Json } from "./json";
/** Registry records (PlatformObject). */

/** How a host resolved (PlatformObject.resolveHost). */
export interface HostResolution {
  tenantId: string;
  /** The custom domain that matched, when resolution was by custom domain. */
  customDomain: string | null;
}

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

// Declared with the resource's schema (issue 26 point 4); re-exported for callers.
export type { CustomDomainInput, CustomDomainPatch, CustomDomainRecord, CustomDomainStatus, DomainCertificate, DomainVerification, DomainVerificationMethod, HostnameState } from "../schemas/platform/custom-domains";

// Declared with the resource's schema (issue 26 point 4); re-exported for callers.
export type { Tenant, TenantInput, TenantPatch } from "../schemas/platform/tenants";
