import { env, SELF } from "cloudflare:test";

/** Test credentials, mirrored from vitest.config.ts bindings. */
export const CP = {
  clientId: "gatehouse-control-plane",
  clientSecret: "test-only-control-plane-secret",
  audience: "urn:gatehouse:management",
  issuer: "http://localhost:8787/",
  tenantId: "control_plane",
};

export const BASE = "http://localhost:8787";

/** A request through the front worker. */
export function call(path: string, init: RequestInit & { host?: string } = {}): Promise<Response> {
  const url = new URL(path, BASE);
  const headers = new Headers(init.headers);
  if (init.host) headers.set("host", init.host);
  return SELF.fetch(url.toString(), { ...init, headers });
}

/** POST /oauth/token with a JSON body. */
export function token(body: Record<string, unknown>, init: { host?: string; headers?: Record<string, string> } = {}) {
  return call("/oauth/token", {
    method: "POST",
    host: init.host,
    headers: { "content-type": "application/json", ...init.headers },
    body: JSON.stringify(body),
  });
}

let cpToken: string | undefined;

/** A management token of the control plane (all scopes), cached for the file. */
export async function controlPlaneToken(): Promise<string> {
  if (cpToken) return cpToken;
  const res = await token({
    grant_type: "client_credentials",
    client_id: CP.clientId,
    client_secret: CP.clientSecret,
    audience: CP.audience,
  });
  if (res.status !== 200) throw new Error(`control-plane token failed: ${res.status} ${await res.text()}`);
  cpToken = ((await res.json()) as { access_token: string }).access_token;
  return cpToken;
}

/** A management API call with a bearer token (JSON in, Response out). */
export async function mgmt(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; host?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  const bearer = options.token ?? (await controlPlaneToken());
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  return call(`/api/v2${path}`, {
    method,
    host: options.host,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body),
  });
}

/** A unique tenant id for a test. */
export const uniqueId = (prefix = "t") => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

/** Creates a child tenant through the API and returns its id. */
export async function createTenant(id = uniqueId()): Promise<string> {
  const res = await mgmt("POST", "/tenants", { body: { id, name: `Tenant ${id}` } });
  if (res.status !== 201) throw new Error(`create tenant failed: ${res.status} ${await res.text()}`);
  return id;
}

export { env };
