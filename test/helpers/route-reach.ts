import { expect } from "vitest";
import { CP, call, createTenant, mgmt } from "./api";
import { seedClient, tokenForm } from "./flows";
import { mintWithTenantKey } from "./mint";

const MANAGEMENT = "urn:gatehouse:management";

/** The tokens a "who can reach this route" test presents, all for one target tenant. */
export interface ReachKit {
  tenant: string;
  /** A real client_credentials token of the tenant holding every scope of the kit. */
  allowed: string;
  /** The tenant's own token without any of the kit's scopes. */
  lacking: string;
  /** Another tenant's token holding every scope of the kit. */
  foreign: string;
  /** A token of the tenant issued to an end user (user-shaped `sub`), claiming every scope of the kit. */
  endUser: string;
  /** A client_credentials token holding every scope, revoked through /oauth/revoke. */
  revoked: string;
}

async function m2mToken(tenant: string, scopes: string[]): Promise<{ token: string; clientId: string; secret: string }> {
  const host = `${tenant}.localhost:8787`;
  const client = await seedClient(tenant, { grant_types: ["client_credentials"] });
  const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: client.client_id, audience: MANAGEMENT, scope: scopes } });
  if (grant.status !== 201) throw new Error(`client grant failed: ${grant.status} ${await grant.text()}`);
  const res = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: MANAGEMENT }, {}, host);
  if (res.status !== 200) throw new Error(`client_credentials failed: ${res.status} ${await res.text()}`);
  return { token: ((await res.json()) as { access_token: string }).access_token, clientId: client.client_id, secret: client.client_secret };
}

/** Mints the five kinds of caller for `scopes` on a fresh tenant (or the one given). */
export async function reachKit(scopes: string[], tenant?: string): Promise<ReachKit> {
  const own = tenant ?? (await createTenant());
  const other = await createTenant();
  const allowed = (await m2mToken(own, scopes)).token;
  // A real scope outside the kit (the branding routes' kit holds read:branding itself).
  const lacking = (await m2mToken(own, [scopes.includes("read:branding") ? "read:logs" : "read:branding"])).token;
  const foreign = (await m2mToken(other, scopes)).token;
  const endUser = await mintWithTenantKey(own, {
    iss: `http://${own}.localhost:8787/`,
    aud: CP.audience,
    scope: scopes.join(" "),
    sub: "auth0|someone",
    gty: "password",
  });
  const toRevoke = await m2mToken(own, scopes);
  const revocation = await call("/oauth/revoke", {
    method: "POST",
    host: `${own}.localhost:8787`,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: toRevoke.token, client_id: toRevoke.clientId, client_secret: toRevoke.secret }).toString(),
  });
  if (revocation.status !== 200) throw new Error(`revocation failed: ${revocation.status}`);
  return { tenant: own, allowed, lacking, foreign, endUser, revoked: toRevoke.token };
}

/**
 * Every refusal of a management route: no token 401, a token lacking the scope 403 naming it, another
 * tenant's token 403, an end user's token 403, a revoked token 403. Nothing is asserted about success here:
 * the caller then calls with `kit.allowed`.
 */
export async function expectRefusals(kit: ReachKit, method: string, path: string, scope: string, body?: unknown): Promise<void> {
  const send = (token: string) => mgmt(method, path, { token, headers: { "tenant-id": kit.tenant }, ...(body !== undefined ? { body } : {}) });
  const where = `${method} ${path}`;
  expect((await send("")).status, `${where}: no token`).toBe(401);
  const lacking = await send(kit.lacking);
  expect(lacking.status, `${where}: scope missing`).toBe(403);
  expect(((await lacking.json()) as { message: string }).message).toContain(scope);
  expect((await send(kit.foreign)).status, `${where}: another tenant's token`).toBe(403);
  expect((await send(kit.endUser)).status, `${where}: an end user's token`).toBe(403);
  expect((await send(kit.revoked)).status, `${where}: a revoked token`).toBe(403);
}
