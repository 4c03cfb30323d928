/**
 * /api/v2/custom-domains (SPEC §2.2, §4.2; issue 15): the reference platform's custom domains. On the
 * control-plane deployment a write registers the hostname with the certificate provider and then commits
 * the registry row; on a tenant deployment it is forwarded to CONTROL_PLANE_URL and the answer mirrored
 * locally; a tenant deployment without CONTROL_PLANE_URL answers 501 to writes while reads keep working.
 */
import { problem, unwrap } from "../../../shared/errors";
import { createCustomDomainBody, setDefaultCustomDomainBody, updateCustomDomainBody } from "../../../shared/schemas/platform/custom-domains";
import type { CustomDomainRecord } from "../../../shared/types";
import type { AppContext } from "../../context";
import { CloudflareSaasProvider } from "../../custom-domains/cloudflare";
import { ControlPlaneDomains } from "../../custom-domains/control-plane";
import { hostnameProblem } from "../../custom-domains/hostname";
import { syncCopyDomains } from "../../deploy/copy-domains";
import { LocalCertificateProvider } from "../../custom-domains/local";
import type { CertificateProvider, HostnameRequest } from "../../custom-domains/provider";
import { auditContext } from "../../http/audit";
import { parseBearer } from "../../http/bearer";
import { forgetHost } from "../../routing/resolve-tenant";
import type { Settings } from "../../settings";
import { platform, tenantExists } from "../../tenant/stubs";
import { defineRoute } from "../define";

/** The configured certificate provider (CUSTOM_DOMAIN_PROVIDER). */
export function certificateProvider(settings: Settings, fetcher?: typeof fetch): CertificateProvider {
  const config = settings.certificateProvider;
  if (config.kind === "cloudflare") {
    return new CloudflareSaasProvider({ ...config, cnameTarget: settings.customDomainTarget, ...(fetcher ? { fetch: fetcher } : {}) });
  }
  return new LocalCertificateProvider(settings.customDomainTarget);
}

/** Where this deployment's custom-domain writes go: the registry of record, or the control plane. */
function writePath(c: AppContext): { kind: "registry" } | { kind: "forward"; client: ControlPlaneDomains } {
  const settings = c.var.settings;
  if (settings.deploymentRole === "control_plane") return { kind: "registry" };
  if (!settings.controlPlaneUrl) throw problem("custom_domain_writes_unavailable");
  const binding = (c.env as unknown as { CONTROL_PLANE?: { fetch(request: Request): Promise<Response> } }).CONTROL_PLANE;
  const bearer = settings.controlPlaneApiToken ?? parseBearer(c.req.header("authorization") ?? "") ?? "";
  return {
    kind: "forward",
    client: new ControlPlaneDomains(
      { baseUrl: settings.controlPlaneUrl, bearer, fetch: binding ? (r) => binding.fetch(r) : (r) => fetch(r) },
      c.var.tenant.id,
    ),
  };
}

const registry = (c: AppContext) => platform(c.env).domains(auditContext(c), c.var.auth.tenantId);

/**
 * A domain the caller may act on: its target tenant's, or any for a control-plane token (which may create
 * domains for other tenants and then verify them by id). Anything else is the same 404 as a missing id.
 */
async function loadDomain(c: AppContext, id: string): Promise<CustomDomainRecord> {
  const record = await platform(c.env).domains().get(id);
  if (!record || (record.tenant_id !== c.var.tenant.id && !c.var.auth.isControlPlane)) throw problem("inexistent_custom_domain");
  return record;
}

const requestOf = (record: Pick<CustomDomainRecord, "domain" | "type" | "verification">): HostnameRequest => ({
  domain: record.domain,
  type: record.type,
  ...(record.verification.methods.some((m) => m.name === "txt") && record.type === "auth0_managed_certs"
    ? { verificationMethod: "txt" as const }
    : {}),
});

/** Applies the reference platform's `fields` / `include_fields` to one record. */
function project(record: CustomDomainRecord, fields: string | undefined, include: string | undefined): Record<string, unknown> {
  if (!fields) return { ...record };
  const names = new Set(fields.split(",").map((f) => f.trim()).filter(Boolean));
  const keep = include !== "false";
  return Object.fromEntries(Object.entries(record).filter(([k]) => names.has(k) === keep));
}

/**
 * The tenant's canonical domain (its name without a custom domain): the issuer's host name for the control
 * plane, `{tenant}.{base domain}` for any other tenant (ports are not part of a domain name).
 */
function canonicalDomain(c: AppContext): string {
  const settings = c.var.settings;
  const hostName = (host: string) => host.replace(/:\d+$/, "");
  const tenantId = c.var.tenant.id;
  if (tenantId === settings.controlPlaneTenantId) return hostName(settings.apexHost);
  return `${tenantId}.${hostName(settings.baseDomain ?? settings.apexHost)}`;
}

/** GET/PATCH /custom-domains/default (the reference platform's shapes): the default custom domain, or `{domain}`. */
const defaultDomainRoutes = [
  defineRoute({
    method: "get",
    path: "/custom-domains/default",
    scope: "read:custom_domains",
    summary: "The tenant's default domain: its default custom domain (is_default true), else {domain} (the canonical domain)",
    status: 200,
    async handler(c) {
      const record = await platform(c.env).domains().defaultOf(c.var.tenant.id);
      return c.json(record ?? { domain: canonicalDomain(c) });
    },
  }),
  defineRoute({
    method: "patch",
    path: "/custom-domains/default",
    scope: "update:custom_domains",
    summary: "Set the default domain: a verified custom domain of the tenant, or its canonical domain",
    body: setDefaultCustomDomainBody,
    status: 200,
    async handler(c, { body }) {
      if (writePath(c).kind === "forward") throw problem("not_implemented", { detail: "the default domain is set on the control plane" });
      const domain = body.domain.trim().toLowerCase();
      const canonical = canonicalDomain(c);
      if (domain === canonical) {
        unwrap(await registry(c).setDefault(c.var.tenant.id, null));
        return c.json({ domain: canonical });
      }
      const own = (await platform(c.env).domains().list(c.var.tenant.id)).find((d) => d.domain === domain);
      if (!own) throw problem("inexistent_custom_domain");
      return c.json(unwrap(await registry(c).setDefault(c.var.tenant.id, own.custom_domain_id)));
    },
  }),
];

export const customDomainRoutes = [
  ...defaultDomainRoutes,
  defineRoute({
    method: "get",
    path: "/custom-domains",
    scope: "read:custom_domains",
    summary: "The target tenant's custom domains, ordered by domain (fields, include_fields)",
    status: 200,
    async handler(c) {
      const q = c.req.query();
      if (q.sort && q.sort !== "domain:1") throw problem("unsupported_sort", { sort: q.sort, supported: "domain:1" });
      const list = await platform(c.env).domains().list(c.var.tenant.id);
      return c.json(list.map((d) => project(d, q.fields, q.include_fields)));
    },
  }),
  defineRoute({
    method: "post",
    path: "/custom-domains",
    scope: "create:custom_domains",
    summary: "Claim a custom domain ({domain, type}; a control-plane token may name tenant_id); 409 when claimed",
    body: createCustomDomainBody,
    status: 201,
    async handler(c, { body }) {
      const tenantId = body.tenant_id ?? c.var.tenant.id;
      if (tenantId !== c.var.tenant.id && !c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      const reason = hostnameProblem(body.domain, c.var.settings.apexHost);
      if (reason) throw problem("invalid_domain", { detail: reason });
      const domain = body.domain.trim().toLowerCase();
      const path = writePath(c);
      if (path.kind === "forward") {
        const { tenant_id: _ignored, ...rest } = body;
        const record = await path.client.create({ ...rest, domain });
        unwrap(await platform(c.env).domains().mirror(record));
        forgetHost(domain);
        return c.json(record, 201);
      }
      if (!(await tenantExists(c.env, c.var.settings, tenantId))) throw problem("tenant_not_found");
      const domains = registry(c);
      if (await domains.claim(domain)) throw problem("domain_conflict", { domain });
      const provider = certificateProvider(c.var.settings);
      const request: HostnameRequest = {
        domain,
        type: body.type,
        ...(body.verification_method ? { verificationMethod: body.verification_method } : {}),
        ...(body.tls_policy ? { tlsPolicy: body.tls_policy } : {}),
      };
      const state = await provider.register(request);
      const result = await domains.add(
        {
          tenant_id: tenantId,
          domain,
          type: body.type,
          ...(body.tls_policy ? { tls_policy: body.tls_policy } : {}),
          ...(body.custom_client_ip_header !== undefined ? { custom_client_ip_header: body.custom_client_ip_header } : {}),
          ...(body.domain_metadata ? { domain_metadata: body.domain_metadata } : {}),
          ...(body.relying_party_identifier ? { relying_party_identifier: body.relying_party_identifier } : {}),
        },
        state,
      );
      // Lost a race for the name: the provider must not keep serving a hostname nobody holds here.
      if (!result.ok) await provider.remove(state.providerRef).catch(() => undefined);
      const record = unwrap(result);
      forgetHost(domain);
      await syncCopyDomains(c.env, tenantId);
      return c.json(record, 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/custom-domains/{id}",
    scope: "read:custom_domains",
    summary: "One custom domain",
    status: 200,
    async handler(c, { params }) {
      return c.json(await loadDomain(c, params.id));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/custom-domains/{id}",
    scope: "update:custom_domains",
    summary: "Update tls_policy, custom_client_ip_header, domain_metadata or relying_party_identifier",
    body: updateCustomDomainBody,
    status: 200,
    async handler(c, { params, body }) {
      await loadDomain(c, params.id);
      const path = writePath(c);
      if (path.kind === "forward") {
        const record = await path.client.update(params.id, body);
        return c.json(unwrap(await platform(c.env).domains().mirror(record)));
      }
      const updated = unwrap(await registry(c).update(params.id, body));
      await syncCopyDomains(c.env, updated.tenant_id);
      return c.json(updated);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/custom-domains/{id}",
    scope: "delete:custom_domains",
    summary: "Release a custom domain (the certificate provider forgets the hostname)",
    status: 204,
    async handler(c, { params }) {
      const record = await loadDomain(c, params.id);
      const path = writePath(c);
      if (path.kind === "forward") {
        await path.client.delete(params.id);
        await platform(c.env).domains().forget(params.id);
      } else {
        const ref = await platform(c.env).domains().providerRef(params.id);
        // The provider first: a hostname the edge still serves must keep its row until it is gone there.
        if (ref) await certificateProvider(c.var.settings).remove(ref);
        unwrap(await registry(c).delete(params.id));
        await syncCopyDomains(c.env, record.tenant_id);
      }
      forgetHost(record.domain);
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "post",
    path: "/custom-domains/{id}/test",
    scope: "create:custom_domains",
    summary: "Test that a custom domain serves: {success, message} (a domain not yet verified is success false)",
    status: 200,
    async handler(c, { params }) {
      const record = await loadDomain(c, params.id);
      if (record.status !== "ready") {
        return c.json({ success: false, message: `The custom domain is not verified yet (status ${record.status})` });
      }
      const ref = await platform(c.env).domains().providerRef(params.id);
      // Where this deployment holds the provider's handle, the provider confirms it still serves the name.
      if (ref && c.var.settings.deploymentRole === "control_plane") {
        const state = await certificateProvider(c.var.settings).check(ref, requestOf(record));
        if (state.status !== "ready") return c.json({ success: false, message: `The certificate provider reports the domain as ${state.status}` });
      }
      return c.json({ success: true, message: `The custom domain ${record.domain} is ready and serves the tenant` });
    },
  }),
  defineRoute({
    method: "post",
    path: "/custom-domains/{id}/verify",
    scope: "create:custom_domains",
    summary: "Run the domain's verification with the certificate provider; answers the domain with its status",
    status: 200,
    async handler(c, { params }) {
      const record = await loadDomain(c, params.id);
      const path = writePath(c);
      let next: CustomDomainRecord;
      if (path.kind === "forward") {
        next = unwrap(await platform(c.env).domains().mirror(await path.client.verify(params.id)));
      } else {
        const provider = certificateProvider(c.var.settings);
        const ref = await platform(c.env).domains().providerRef(params.id);
        const state = ref ? await provider.check(ref, requestOf(record)) : await provider.register(requestOf(record));
        next = unwrap(await registry(c).recordState(params.id, state));
        await syncCopyDomains(c.env, record.tenant_id);
      }
      forgetHost(record.domain);
      return c.json(next);
    },
  }),
];
