import type { RunningServer } from "../../../scripts/e2e-server.mjs";

/** The management API audience of every Gatehouse deployment (SPEC §4.2). */
export const MANAGEMENT_AUDIENCE = "urn:gatehouse:management";

/**
 * How the `auth0` SDK (7.x) is pointed at a local http server.
 *
 * The SDK has no base-URL option: `ManagementClient` hard-codes `https://${domain}/api/v2` for the API and its
 * `TokenProvider` hard-codes `https://${domain}/oauth/token` (the `baseUrl` option is overwritten, and omitted
 * from the wrapper's types). Both, however, send every request through the `fetch` option when one is given.
 * So we pass `domain: "localhost:PORT"` and a `fetch` that maps `https://localhost:PORT/...` to the plain-http
 * server, refusing any other URL so a wrong base URL fails loudly instead of leaving the machine.
 */
export function sdkFetchFor(server: RunningServer): typeof fetch {
  const httpOrigin = new URL(server.baseUrl).origin;
  const httpsOrigin = `https://${new URL(server.baseUrl).host}`;
  const sdkFetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(`${httpsOrigin}/`)) {
      return Promise.reject(new Error(`auth0 SDK requested an unexpected URL: ${url}`));
    }
    return fetch(`${httpOrigin}${url.slice(httpsOrigin.length)}`, init);
  };
  return sdkFetch as typeof fetch;
}

/** The options shared by `ManagementClient` and `TokenProvider` for a local Gatehouse. */
export function sdkOptions(server: RunningServer) {
  return {
    // `localhost:PORT`, or a child tenant's `{tenant}.localhost:PORT` (helpers/tenant-server.ts).
    domain: new URL(server.baseUrl).host,
    audience: MANAGEMENT_AUDIENCE,
    fetch: sdkFetchFor(server),
  };
}

/**
 * The API base the SDK itself builds (`https://${domain}/api/v2`). Needed for absolute URLs in passthrough
 * requests: the SDK joins a relative path onto its base with `URL.pathname`, which percent-encodes `?`, so
 * `client.fetch("/tenants?page=0")` would request `/api/v2/tenants%3Fpage=0`.
 */
export const sdkApiBase = (server: RunningServer) => `https://${new URL(server.baseUrl).host}/api/v2`;

/** A management API token of the server's control-plane client (client_credentials over plain HTTP). */
export async function managementToken(server: RunningServer): Promise<string> {
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: server.clientId, client_secret: server.clientSecret, audience: MANAGEMENT_AUDIENCE }),
  });
  if (res.status !== 200) throw new Error(`POST /oauth/token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** One management API call with a JSON body; throws with the answer unless the status is the expected one. */
export async function managementCall<T>(server: RunningServer, token: string, method: string, path: string, body: unknown, expected = 201): Promise<T> {
  const res = await fetch(`${server.baseUrl}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== expected) throw new Error(`${method} /api/v2${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
