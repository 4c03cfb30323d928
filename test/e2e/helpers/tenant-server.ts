import { randomBytes } from "node:crypto";
import { ManagementClient } from "auth0";
import type { RunningServer } from "../../../scripts/e2e-server.mjs";
// Node's fetch (the tests', the SDK's) reaches a tenant at `{tenant}.localhost`, as a browser does.
import "./localhost-dns.mjs";
import { MANAGEMENT_AUDIENCE, managementToken, sdkOptions } from "./auth0";

/**
 * A child tenant of its own on a server (the e2e suite's shared one): a file that changes a tenant's settings
 * (MFA policy, theme, prompt texts, connections) changes its own tenant's, which no other file reads, and
 * needs no `wrangler dev` of its own (8-10 s of both cores each).
 *
 * `tenantServer` makes a new child tenant of `server` (created with the control plane's token), seen as a server of its own: its
 * host and issuer, and the credentials of a machine-to-machine application of the tenant granted every scope
 * of its management API (what a tenant's administrator sets up), so the suite's management calls act on this
 * tenant alone. `stop` and `log` are the server's.
 */
export async function tenantServer(server: RunningServer, label: string): Promise<RunningServer> {
  const id = `e2e-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "")}-${randomBytes(4).toString("hex")}`;
  const token = await managementToken(server);
  const call = async <T>(method: string, path: string, body: unknown, expected: number, tenant: string | null = id): Promise<T> => {
    const res = await fetch(`${server.baseUrl}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(tenant ? { "tenant-id": tenant } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== expected) throw new Error(`${method} /api/v2${path} (tenant ${tenant ?? "control plane"}): ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  await call("POST", "/tenants", { id, name: `E2E ${label}` }, 201, null);
  const [client, apis] = await Promise.all([
    call<{ client_id: string; client_secret: string }>("POST", "/clients", { name: "E2E administrator", app_type: "non_interactive", grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_post" }, 201),
    call<Array<{ identifier: string; scopes?: Array<{ value: string }> }>>("GET", "/resource-servers", undefined, 200),
  ]);
  const scopes = (apis.find((api) => api.identifier === MANAGEMENT_AUDIENCE)?.scopes ?? []).map((s) => s.value);
  if (scopes.length === 0) throw new Error(`tenant ${id} has no management API scopes: ${JSON.stringify(apis)}`);
  await call("POST", "/client-grants", { client_id: client.client_id, audience: MANAGEMENT_AUDIENCE, scope: scopes }, 201);
  const baseUrl = `http://${id}.localhost:${server.port}`;
  return { ...server, baseUrl, issuer: `${baseUrl}/`, clientId: client.client_id, clientSecret: client.client_secret };
}

/** The `auth0` SDK as the tenant's administrator (on its host, with its machine-to-machine application). */
export function tenantAdmin(server: RunningServer): ManagementClient {
  return new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
}

/**
 * A new child tenant of `server` managed from the control plane, as an operator does (the README's `tenant-id`
 * header): the `auth0` SDK with the control plane's credentials, each of its API requests naming the tenant.
 * Nothing is created in the tenant (no administrator application), so its logs hold only what the test does.
 * Answers the tenant's id, its host (`baseUrl`) and the SDK.
 */
export async function controlledTenant(server: RunningServer, label: string): Promise<{ id: string; baseUrl: string; admin: ManagementClient }> {
  const id = `e2e-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "")}-${randomBytes(4).toString("hex")}`;
  const created = await fetch(`${server.baseUrl}/api/v2/tenants`, {
    method: "POST",
    headers: { authorization: `Bearer ${await managementToken(server)}`, "content-type": "application/json" },
    body: JSON.stringify({ id, name: `E2E ${label}` }),
  });
  if (created.status !== 201) throw new Error(`POST /api/v2/tenants: ${created.status} ${await created.text()}`);
  const options = sdkOptions(server);
  const naming = ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!new URL(url).pathname.startsWith("/api/v2/")) return options.fetch(input, init);
    const headers = new Headers(init?.headers);
    headers.set("tenant-id", id);
    return options.fetch(input, { ...init, headers });
  }) as typeof fetch;
  const admin = new ManagementClient({ ...options, fetch: naming, clientId: server.clientId, clientSecret: server.clientSecret });
  return { id, baseUrl: `http://${id}.localhost:${server.port}`, admin };
}
