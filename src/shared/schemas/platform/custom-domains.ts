import { z } from "zod";

const IP_HEADERS = ["true-client-ip", "cf-connecting-ip", "x-forwarded-for", "x-azure-clientip", ""] as const;

/** The reference platform's `domain_metadata`: at most 10 string values of at most 255 characters. */
const atMostTen = (m: Record<string, unknown>) => Object.keys(m).length <= 10;
const domainMetadata = z.record(z.string().min(1).max(255), z.string().max(255)).refine(atMostTen, "domain_metadata allows at most 10 properties");
/** On PATCH a null value removes a key. */
const domainMetadataPatch = z
  .record(z.string().min(1).max(255), z.string().max(255).nullable())
  .refine(atMostTen, "domain_metadata allows at most 10 properties");

const common = {
  tls_policy: z.enum(["recommended"], { message: 'tls_policy must be "recommended"' }),
  custom_client_ip_header: z.enum(IP_HEADERS, { message: `custom_client_ip_header must be one of ${IP_HEADERS.filter(Boolean).join(", ")}` }).nullable(),
  relying_party_identifier: z.string().trim().min(1).max(253),
};

/**
 * POST /api/v2/custom-domains (the reference platform's CreateCustomDomainRequestContent; SPEC §4.2 adds
 * `tenant_id`, which only a control-plane token may set to another tenant). Unknown properties are refused;
 * the hostname rules are checked by the route (they depend on the issuer's apex).
 */
export const createCustomDomainBody = z.strictObject({
  domain: z.string().max(253, "domain must be at most 253 characters"),
  type: z.enum(["auth0_managed_certs", "self_managed_certs"], { message: 'type must be "auth0_managed_certs" or "self_managed_certs"' }),
  tenant_id: z.string().min(1).max(64).optional(),
  verification_method: z.enum(["txt"], { message: 'verification_method must be "txt"' }).optional(),
  tls_policy: common.tls_policy.optional(),
  custom_client_ip_header: common.custom_client_ip_header.optional(),
  domain_metadata: domainMetadata.optional(),
  relying_party_identifier: common.relying_party_identifier.optional(),
});

export type CreateCustomDomainBody = z.infer<typeof createCustomDomainBody>;

/** PATCH /api/v2/custom-domains/{id}: the reference platform's updatable attributes. */
export const updateCustomDomainBody = z
  .strictObject({
    tls_policy: common.tls_policy,
    custom_client_ip_header: common.custom_client_ip_header,
    domain_metadata: domainMetadataPatch,
    relying_party_identifier: common.relying_party_identifier.nullable(),
  })
  .partial();

/** PATCH /custom-domains/default: a verified custom domain of the tenant, or its canonical domain. */
export const setDefaultCustomDomainBody = z.strictObject({ domain: z.string().trim().min(1).max(255) });

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
