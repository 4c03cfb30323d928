import { nowIso } from "./time";
import type { CertificateProvider, HostnameRequest } from "./provider";
import type { HostnameState } from "../../shared/types";

/**
 * The local certificate provider (`npm start`, tests; CUSTOM_DOMAIN_PROVIDER unset or `local`): nothing to
 * prove on this machine, so every hostname it registers is verified and ready at once. The verification
 * records are still the ones a person would publish (a CNAME to `target`, or a TXT record).
 */
export class LocalCertificateProvider implements CertificateProvider {
  readonly name = "local";

  constructor(private readonly target: string) {}

  private state(ref: string, request: HostnameRequest): HostnameState {
    const verifiedAt = nowIso();
    const token = ref.replace(/^local:/, "");
    const method =
      request.type === "self_managed_certs" || request.verificationMethod === "txt"
        ? { name: "txt" as const, record: `gatehouse-domain-verification=${token}`, domain: `_cf-custom-hostname.${request.domain}` }
        : { name: "cname" as const, record: this.target };
    return {
      providerRef: ref,
      status: "ready",
      verification: { methods: [method], status: "verified", last_verified_at: verifiedAt },
      ...(request.type === "auth0_managed_certs" ? { certificate: { status: "provisioned" as const, certificate_authority: "letsencrypt" as const } } : {}),
      ...(request.type === "self_managed_certs" ? { origin_domain_name: this.target } : {}),
    };
  }

  async register(request: HostnameRequest): Promise<HostnameState> {
    return this.state(`local:${crypto.randomUUID()}`, request);
  }

  async check(providerRef: string, request: HostnameRequest): Promise<HostnameState> {
    return this.state(providerRef, request);
  }

  async remove(): Promise<void> {}
}
