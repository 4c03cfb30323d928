import { expect } from "vitest";
import { mgmt } from "./api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "./flows";

/** Refresh-token flows through the real /authorize and /oauth/token of one tenant (SPEC §2.8, §3.3). */

export const CALLBACK = "https://app.example.com/callback";

export interface TokenBody {
  access_token: string;
  id_token?: string;
  refresh_token?: string;
  scope: string;
  error?: string;
  error_description?: string;
}

/** One application and one signed-in user of it. */
export interface RefreshSetup {
  tenant: string;
  client: TestClient;
  user: { user_id: string };
  cookie: string;
}

const hostOf = (tenant: string) => `${tenant}.localhost:8787`;

/** A client (with the given refresh_token settings, through PATCH /clients) and a user signed in to it. */
export async function refreshSetup(
  tenant: string,
  settings: Record<string, unknown> = {},
  fields: Parameters<typeof seedClient>[1] = {},
  user?: { user_id: string },
): Promise<RefreshSetup> {
  const client = await seedClient(tenant, { callbacks: [CALLBACK], ...fields });
  if (Object.keys(settings).length) {
    const res = await mgmt("PATCH", `/clients/${client.client_id}`, { headers: { "tenant-id": tenant }, body: { refresh_token: settings } });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  const who = user ?? (await seedUser(tenant, `rt-${crypto.randomUUID().slice(0, 8)}@example.com`));
  const cookie = await sessionCookie(tenant, who.user_id, client.client_id);
  return { tenant, client, user: who, cookie };
}

/** A code flow with offline_access, redeemed at the token endpoint. */
export async function loginOffline(s: RefreshSetup, extra: Record<string, string> = {}): Promise<TokenBody> {
  const host = hostOf(s.tenant);
  const res = await authorize({ client_id: s.client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access", ...extra }, { host, cookie: s.cookie });
  const code = redirectParams(res).query.get("code") as string;
  const out = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: s.client.client_id, client_secret: s.client.client_secret }, {}, host);
  expect(out.status).toBe(200);
  return (await out.json()) as TokenBody;
}

/** The refresh grant. */
export const refreshGrant = (tenant: string, client: TestClient, refresh_token: string, extra: Record<string, string> = {}) =>
  tokenForm({ grant_type: "refresh_token", refresh_token, client_id: client.client_id, client_secret: client.client_secret, ...extra }, {}, hostOf(tenant));

/** The refresh grant's refusal (SPEC §7: invalid_grant, 403 unless the client is not OIDC-conformant). */
export async function expectRefused(res: Response, description: string, status = 403): Promise<void> {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual({ error: "invalid_grant", error_description: description });
}
