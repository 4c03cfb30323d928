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
