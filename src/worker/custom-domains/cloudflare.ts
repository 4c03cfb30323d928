import { problem } from "../../shared/errors";
import type { DomainCertificate, DomainVerificationMethod, HostnameState } from "../../shared/types";
import type { CertificateProvider, HostnameRequest } from "./provider";
import { nowIso } from "./time";

/** Configuration of the Cloudflare for SaaS provider (CUSTOM_DOMAIN_PROVIDER=cloudflare). */
export interface CloudflareSaasOptions {
  apiToken: string;
  zoneId: string;
  /** @default "https://api.cloudflare.com/client/v4" */
  apiBase: string;
  /** The CNAME target customers point their hostname at (the zone's fallback origin). */
  cnameTarget: string;
  fetch?: typeof fetch;
}

/** The parts of a Cloudflare custom hostname we read. */
interface CustomHostname {
  id: string;
  hostname: string;
  status?: string;
  ssl?: { status?: string; validation_errors?: { message?: string }[] };
  ownership_verification?: { type?: string; name?: string; value?: string };
  verification_errors?: string[];
}

interface Envelope<T> {
  success: boolean;
  errors?: { code?: number; message?: string }[];
  result?: T;
}

const FAILED_HOSTNAME = new Set(["blocked", "moved", "deleted", "pending_deletion", "test_blocked", "test_failed"]);
const FAILED_SSL = new Set(["validation_timed_out", "issuance_timed_out", "deployment_timed_out", "initializing_timed_out", "expired", "deleted"]);
/** Cloudflare's "Duplicate custom hostname found." */
const DUPLICATE_HOSTNAME = 1406;

/**
 * Custom hostnames through the Cloudflare for SaaS API (`/zones/{zone}/custom_hostnames`). Managed
 * certificates are issued by Cloudflare with HTTP validation (automatic once the customer's CNAME points at
 * `cnameTarget`); self-managed hostnames register no certificate: the customer's proxy terminates TLS and
 * forwards to `origin_domain_name`, ownership proven by the TXT record Cloudflare hands out.
 */
export class CloudflareSaasProvider implements CertificateProvider {
  readonly name = "cloudflare";
  private readonly fetcher: typeof fetch;

  constructor(private readonly options: CloudflareSaasOptions) {
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; envelope: Envelope<T> }> {
    const url = `${this.options.apiBase.replace(/\/$/, "")}/zones/${encodeURIComponent(this.options.zoneId)}/custom_hostnames${path}`;
    let res: Response;
    try {
      res = await this.fetcher(url, {
        method,
        headers: { authorization: `Bearer ${this.options.apiToken}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw problem("certificate_provider_failed", { detail: error instanceof Error ? error.message : "network error" });
    }
    const envelope = (await res.json().catch(() => ({ success: false, errors: [{ message: `HTTP ${res.status}` }] }))) as Envelope<T>;
    return { status: res.status, envelope };
  }

  private refused(envelope: Envelope<unknown>, status: number): never {
    throw problem("certificate_provider_failed", { detail: envelope.errors?.[0]?.message ?? `HTTP ${status}` });
  }

  async register(request: HostnameRequest): Promise<HostnameState> {
    const body =
      request.type === "auth0_managed_certs"
        ? { hostname: request.domain, ssl: { method: request.verificationMethod === "txt" ? "txt" : "http", type: "dv", settings: { min_tls_version: "1.2" } } }
        : { hostname: request.domain };
    const { status, envelope } = await this.call<CustomHostname>("POST", "", body);
    if (!envelope.success || !envelope.result) {
      if (envelope.errors?.some((e) => e.code === DUPLICATE_HOSTNAME)) throw problem("domain_conflict", { domain: request.domain });
      this.refused(envelope, status);
    }
    return this.toState(envelope.result, request);
  }

  async check(providerRef: string, request: HostnameRequest): Promise<HostnameState> {
    const { status, envelope } = await this.call<CustomHostname>("GET", `/${encodeURIComponent(providerRef)}`);
    if (!envelope.success || !envelope.result) this.refused(envelope, status);
    return this.toState(envelope.result, request);
  }

  async remove(providerRef: string): Promise<void> {
    const { status, envelope } = await this.call<{ id: string }>("DELETE", `/${encodeURIComponent(providerRef)}`);
    if (status === 404) return;
    if (!envelope.success) this.refused(envelope, status);
  }

  /** Cloudflare's hostname and certificate states, in the reference platform's terms. */
  private toState(hostname: CustomHostname, request: HostnameRequest): HostnameState {
    const managed = request.type === "auth0_managed_certs";
    const sslStatus = hostname.ssl?.status ?? "";
    const active = hostname.status === "active" && (!managed || sslStatus === "active");
    const failed = FAILED_HOSTNAME.has(hostname.status ?? "") || (managed && FAILED_SSL.has(sslStatus));
    const methods: DomainVerificationMethod[] = [];
    if (managed && request.verificationMethod !== "txt") methods.push({ name: "cname", record: this.options.cnameTarget });
    const ownership = hostname.ownership_verification;
    if (ownership?.name && ownership.value) methods.push({ name: "txt", record: ownership.value, domain: ownership.name });
    const error = hostname.verification_errors?.[0] ?? hostname.ssl?.validation_errors?.[0]?.message;
    const certificate: DomainCertificate | undefined = managed
      ? { status: sslStatus === "active" ? "provisioned" : FAILED_SSL.has(sslStatus) ? "provisioning_failed" : "provisioning" }
      : undefined;
    return {
      providerRef: hostname.id,
      status: active ? "ready" : failed ? "failed" : "pending_verification",
      verification: {
        methods,
        status: active ? "verified" : failed ? "failed" : "pending",
        ...(error && !active ? { error_msg: error } : {}),
        ...(active ? { last_verified_at: nowIso() } : {}),
      },
      ...(certificate ? { certificate } : {}),
      ...(managed ? {} : { origin_domain_name: this.options.cnameTarget }),
    };
  }
}
