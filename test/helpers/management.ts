import { mgmt, uniqueId } from "./api";

/** A client as the management API returns it. */
export interface ClientBody {
  client_id: string;
  client_secret?: string;
  [field: string]: unknown;
}

type Target = { headers?: Record<string, string> };

async function created<T>(res: Response, what: string): Promise<T> {
  if (res.status !== 201) throw new Error(`create ${what} failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** POST /clients (control plane unless a tenant-id header is given). */
export async function createClient(body: Record<string, unknown> = {}, target: Target = {}): Promise<ClientBody> {
  return created(await mgmt("POST", "/clients", { body: { name: "Test app", ...body }, ...target }), "client");
}

/** POST /resource-servers with a unique identifier and the given scopes. */
export async function createApi(scopes: string[] = ["read:things"], target: Target = {}) {
  const identifier = `https://${uniqueId("api")}.example.com/`;
  const body = { identifier, name: "Things API", scopes: scopes.map((value) => ({ value, description: value })) };
  return created<{ id: string; identifier: string }>(await mgmt("POST", "/resource-servers", { body, ...target }), "resource server");
}

/** POST /client-grants. */
export async function grantClient(clientId: string, audience: string, scope: string[], target: Target = {}) {
  const body = { client_id: clientId, audience, scope };
  return created<{ id: string }>(await mgmt("POST", "/client-grants", { body, ...target }), "client grant");
}

/** Lets the clock move on, so that two records are not created in the same millisecond (lists are newest first). */
export const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/**
 * A management token of a tenant's own M2M client holding exactly `scopes` (a client grant on the
 * management API, then client_credentials on the tenant's host): for "who can reach this route" tests.
 */
export async function tenantManagementToken(tenantId: string, scopes: string[]): Promise<string> {
  const { seedClient, tokenForm } = await import("./flows");
  const client = await seedClient(tenantId, { grant_types: ["client_credentials"] });
  const grant = await mgmt("POST", "/client-grants", {
    headers: { "tenant-id": tenantId },
    body: { client_id: client.client_id, audience: "urn:gatehouse:management", scope: scopes },
  });
  if (grant.status !== 201) throw new Error(`client grant failed: ${grant.status} ${await grant.text()}`);
  const res = await tokenForm(
    { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: "urn:gatehouse:management" },
    {},
    `${tenantId}.localhost:8787`,
  );
  if (res.status !== 200) throw new Error(`client_credentials failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}
