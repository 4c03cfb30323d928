import { env } from "cloudflare:test";
import { expect } from "vitest";
import { CONSOLE_CLIENT_ID, consoleCallback } from "../../src/shared/console";
import { sha256 } from "../../src/shared/crypto/compare";
import { toBase64Url } from "../../src/shared/crypto/encoding";
import { randomToken } from "../../src/shared/crypto/random";
import { MANAGEMENT_SCOPES } from "../../src/shared/scopes";
import { consoleClientSecret } from "../../src/worker/admin/credentials";
import { BASE, CP, call, mgmt, uniqueId } from "./api";
import { seedUser } from "./flows";
import { csrfOf, TestBrowser } from "./mfa";

/** Console operators' management tokens, as the console gets them (issue 30), for who-can-reach tests. */

const PASSWORD = "operator-p4ssw0rd!";

/** The id of a control-plane role by its name (the seeded "Gatehouse Admin", "Gatehouse Editor", "Gatehouse Viewer"). */
export async function roleId(name: string): Promise<string> {
  const roles = (await (await mgmt("GET", `/roles?name_filter=${encodeURIComponent(name)}`)).json()) as { id: string; name: string }[];
  const role = roles.find((r) => r.name === name);
  if (!role) throw new Error(`no role ${name}`);
  return role.id;
}

/**
 * A new control-plane user holding `role`, and its console management token: authorization code with PKCE
 * and the console's secret.
 */
export async function operatorLogin(role: string): Promise<{ token: string; userId: string }> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  expect((await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/roles`, { body: { roles: [await roleId(role)] } })).status).toBe(204);
  const browser = new TestBrowser("localhost:8787");
  const verifier = randomToken(32);
  const redirectUri = consoleCallback(`${BASE}/`);
  const query = new URLSearchParams({
    response_type: "code",
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: redirectUri,
    scope: ["openid", ...MANAGEMENT_SCOPES].join(" "),
    audience: CP.audience,
    state: "s",
    nonce: "n",
    code_challenge: toBase64Url(await sha256(verifier)),
    code_challenge_method: "S256",
  });
  const form = await browser.follow(await browser.get(`/authorize?${query}`));
  const action = /<form[^>]+action="([^"]+)"/.exec(await form.clone().text())?.[1]?.replaceAll("&amp;", "&") ?? "";
  const posted = await browser.post(action, { _csrf: csrfOf(await form.text()), email, password: PASSWORD });
  const code = new URL(String(posted.headers.get("location"))).searchParams.get("code") ?? "";
  const body = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: CONSOLE_CLIENT_ID, client_secret: await consoleClientSecret(env.ENCRYPTION_KEY), code_verifier: verifier });
  const res = await call("/oauth/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() });
  expect(res.status, await res.clone().text()).toBe(200);
  return { token: ((await res.json()) as { access_token: string }).access_token, userId: user.user_id };
}

/** An operator's console management token (see {@link operatorLogin}). */
export const operatorToken = async (role: string): Promise<string> => (await operatorLogin(role)).token;

/** A new control-plane user with `password`, holding the role named `roleName` (none when null): its email. */
export async function operatorWith(roleName: string | null, password: string): Promise<string> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, password);
  if (!roleName) return email;
  const res = await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/roles`, { body: { roles: [await roleId(roleName)] } });
  expect(res.status).toBe(204);
  return email;
}
