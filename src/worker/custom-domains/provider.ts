import type { CustomDomainRecord, HostnameState } from "../../shared/types";

/** What the provider needs to know about a hostname it is asked to serve. */
export interface HostnameRequest {
  domain: string;
  type: CustomDomainRecord["type"];
  /** `txt` asks for a TXT record rather than a CNAME (the reference platform's `verification_method`). */
  verificationMethod?: "txt";
  tlsPolicy?: string;
}

/**
 * The edge certificate provider behind custom domains (ARCHITECTURE.md §6): it registers a hostname so the
 * edge accepts and serves it, reports whether it is verified, and forgets it. A refusal throws a
 * ManagementError (`certificate_provider_failed` or `domain_conflict`).
 */
export interface CertificateProvider {
  readonly name: string;
  register(request: HostnameRequest): Promise<HostnameState>;
  /** The provider's current view of a registered hostname. */
  check(providerRef: string, request: HostnameRequest): Promise<HostnameState>;
  /** Forgets a hostname; one already gone is not an error. */
  remove(providerRef: string): Promise<void>;
}
