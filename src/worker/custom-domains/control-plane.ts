import { problem } from "../../shared/errors";
import type { CustomDomainPatch, CustomDomainRecord } from "../../shared/types";

/** How a tenant deployment reaches its control plane: the CONTROL_PLANE service binding, else fetch. */
export interface ControlPlaneLink {
  baseUrl: string;
  /** The bearer for forwarded writes: CONTROL_PLANE_API_TOKEN, else the caller's own token. */
  bearer: string;
  fetch: (request: Request) => Promise<Response>;
}

/**
 * Custom-domain writes on a tenant deployment (SPEC §4.2): forwarded to the control plane's management API,
 * which registers the hostname with the certificate provider; the answer is the record to mirror locally.
 * The control plane's own refusals (400, 403, 404, 409) come back with their status and message.
 */
export class ControlPlaneDomains {
  constructor(
    private readonly link: ControlPlaneLink,
    private readonly tenantId: string,
  ) {}

  private async send<T>(method: string, path: string, body?: unknown): Promise<T | null> {
    const url = `${this.link.baseUrl.replace(/\/$/, "")}/api/v2/custom-domains${path}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.link.bearer}`, "tenant-id": this.tenantId };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await this.link.fetch(new Request(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }));
    } catch (error) {
      throw problem("control_plane_unreachable", { detail: error instanceof Error ? error.message : "network error" });
    }
    if (res.status === 204) return null;
    const payload = (await res.json().catch(() => null)) as (T & { message?: string; errorCode?: string }) | null;
    if (!res.ok) {
      if (res.status === 409) throw problem("domain_conflict", { domain: String((body as { domain?: string } | undefined)?.domain ?? "") });
      if (res.status === 404) throw problem("inexistent_custom_domain");
      throw problem("control_plane_unreachable", { detail: `HTTP ${res.status}${payload?.message ? `: ${payload.message}` : ""}` });
    }
    if (!payload) throw problem("control_plane_unreachable", { detail: "empty answer" });
    return payload;
  }

  async create(body: Record<string, unknown>): Promise<CustomDomainRecord> {
    return (await this.send<CustomDomainRecord>("POST", "", { ...body, tenant_id: this.tenantId })) as CustomDomainRecord;
  }

  async verify(id: string): Promise<CustomDomainRecord> {
    return (await this.send<CustomDomainRecord>("POST", `/${encodeURIComponent(id)}/verify`)) as CustomDomainRecord;
  }

  async update(id: string, patch: CustomDomainPatch): Promise<CustomDomainRecord> {
    return (await this.send<CustomDomainRecord>("PATCH", `/${encodeURIComponent(id)}`, patch)) as CustomDomainRecord;
  }

  async delete(id: string): Promise<void> {
    await this.send("DELETE", `/${encodeURIComponent(id)}`);
  }
}
