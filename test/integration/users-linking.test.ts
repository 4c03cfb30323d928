import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { authorize, redirectParams, seedClient, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { api, createConnection, createUser, DB, emailUser, failure, path, type UserBody, usersTenant } from "../helpers/users";

/** Issue 9 point 4: account linking (SPEC §2.12, §4.2 POST/DELETE /users/{id}/identities, PATCH with connection). */

const CALLBACK = "https://app.example.com/callback";
const ORIGIN = "https://app.example.com";
const PASSWORD = "Sufficient-Pw-1";
const MANAGEMENT = "urn:gatehouse:management";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await usersTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], web_origins: [ORIGIN] });
  await createConnection(tenant, "sms", "sms");
});

const unique = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const link = (primary: string, body: unknown, token?: string) => api(tenant, "POST", path(primary, "/identities"), body, token);

/** A password login through /co/authenticate and /authorize; answers the `sub` of the ID token. */
async function passwordLogin(email: string, password = PASSWORD): Promise<{ status: number; sub?: string }> {
  const co = await call("/co/authenticate", {
    method: "POST",
    host,
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ client_id: client.client_id, username: email, password, credential_type: "password" }),
  });
  if (co.status !== 200) return { status: co.status };
  const { login_ticket } = (await co.json()) as { login_ticket: string };
  const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", login_ticket }, { host });
  const code = redirectParams(res).query.get("code") as string;
  const tokens = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
  return { status: tokens.status, sub: String(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).sub) };
}

describe("POST /users/{id}/identities", () => {
  it("links with {provider, user_id}: the secondary becomes an identity with its profile and leaves every listing", async () => {
    const primary = await createUser(tenant, { connection: DB, email: unique("primary"), password: PASSWORD });
    const secondary = await emailUser(tenant, unique("secondary"), { name: "Second Self", email_verified: true });
    const bare = secondary.user_id.slice("email|".length);
    const res = await link(primary.user_id, { provider: "email", user_id: bare });
    expect(res.status).toBe(201);
    const identities = (await res.json()) as UserBody["identities"];
    expect(identities).toEqual([
      { connection: DB, provider: "auth0", user_id: primary.user_id.slice(6), isSocial: false },
      { connection: "email", provider: "email", user_id: bare, isSocial: false, profileData: { email: secondary.email, email_verified: true, name: "Second Self", nickname: secondary.nickname } },
    ]);
    const read = (await (await api(tenant, "GET", path(primary.user_id))).json()) as UserBody;
    expect(read.identities).toEqual(identities);
    expect((await api(tenant, "GET", path(secondary.user_id))).status).toBe(404);
    const listed = (await (await api(tenant, "GET", "/users?per_page=100")).json()) as UserBody[];
    expect(listed.map((u) => u.user_id)).toContain(primary.user_id);
    expect(listed.map((u) => u.user_id)).not.toContain(secondary.user_id);
    const walked = (await (await api(tenant, "GET", "/users?take=100")).json()) as { users: UserBody[] };
    expect(walked.users.map((u) => u.user_id)).not.toContain(secondary.user_id);
    expect(await (await api(tenant, "GET", `/users-by-email?email=${encodeURIComponent(secondary.email as string)}`)).json()).toEqual([read]);
  });

  it("takes the user id already prefixed, and keeps pipes inside ids", async () => {
    const primary = await emailUser(tenant, unique("p2"));
    const piped = await createUser(tenant, { connection: DB, email: unique("piped"), password: PASSWORD, user_id: `corp|${crypto.randomUUID().slice(0, 6)}` });
    const res = await link(primary.user_id, { provider: "auth0", user_id: piped.user_id });
    expect(res.status, await res.clone().text()).toBe(201);
    const identities = (await res.json()) as UserBody["identities"];
    expect(identities[1]).toMatchObject({ provider: "auth0", user_id: piped.user_id.slice("auth0|".length) });
    expect(identities[1]?.user_id).toMatch(/^corp\|/);
    const unlinked = await api(tenant, "DELETE", path(primary.user_id, `/identities/auth0/${encodeURIComponent(identities[1]?.user_id as string)}`));
    expect(unlinked.status).toBe(200);
    expect((await api(tenant, "GET", path(piped.user_id))).status).toBe(200);
  });

  it("refuses linking a user to itself, an unknown account, an already linked one, and onto an unknown primary", async () => {
    const primary = await emailUser(tenant, unique("p3"));
    const other = await emailUser(tenant, unique("o3"));
    const bare = (u: UserBody) => u.user_id.slice("email|".length);
    expect(await failure(await link(primary.user_id, { provider: "email", user_id: bare(primary) }))).toEqual({ status: 400, message: "Main identity and the new one are the same.", errorCode: "invalid_body" });
    expect(await failure(await link(primary.user_id, { provider: "email", user_id: "nobody" }))).toEqual({ status: 400, message: "Linking an inexistent identity is not allowed.", errorCode: "invalid_body" });
    expect((await failure(await link(primary.user_id, { provider: "auth0", user_id: bare(other) }))).status).toBe(400);
    expect((await failure(await link(primary.user_id, { provider: "email", user_id: bare(other), connection_id: "con_wrong" }))).status).toBe(400);
    expect((await link(primary.user_id, { provider: "email", user_id: bare(other) })).status).toBe(201);
    const third = await emailUser(tenant, unique("t3"));
    expect(await failure(await link(third.user_id, { provider: "email", user_id: bare(other) }))).toMatchObject({ status: 400, message: "The identity is already linked to a user." });
    expect((await failure(await link(other.user_id, { provider: "email", user_id: bare(third) }))).status).toBe(404);
    expect(await failure(await link("auth0|nobody", { provider: "email", user_id: bare(third) }))).toMatchObject({ status: 404, errorCode: "inexistent_user" });
    for (const body of [{}, { provider: "email" }, { user_id: "x" }, { provider: "email", user_id: "x", extra: 1 }, { link_with: "x", provider: "email" }]) {
      expect((await link(third.user_id, body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it("linking a user that has linked accounts of its own moves them to the new primary too", async () => {
    const top = await emailUser(tenant, unique("top"));
    const middle = await emailUser(tenant, unique("middle"));
    const bottom = await emailUser(tenant, unique("bottom"));
    expect((await link(middle.user_id, { provider: "email", user_id: bottom.user_id })).status).toBe(201);
    const res = await link(top.user_id, { provider: "email", user_id: middle.user_id });
    expect(res.status).toBe(201);
    expect(((await res.json()) as UserBody["identities"]).map((i) => `email|${i.user_id}`)).toEqual([top.user_id, middle.user_id, bottom.user_id]);
    expect((await api(tenant, "GET", path(middle.user_id))).status).toBe(404);
    const unlinked = await api(tenant, "DELETE", path(top.user_id, `/identities/email/${bottom.user_id.slice(6)}`));
    expect(((await unlinked.json()) as UserBody["identities"]).map((i) => `email|${i.user_id}`)).toEqual([top.user_id, middle.user_id]);
  });

  it("a linked account's password logs its person in as the primary user", async () => {
    const primary = await emailUser(tenant, unique("main"));
    const email = unique("pwd-secondary");
    const secondary = await createUser(tenant, { connection: DB, email, password: PASSWORD });
    expect((await passwordLogin(email)).sub).toBe(secondary.user_id);
    expect((await link(primary.user_id, { provider: "auth0", user_id: secondary.user_id })).status).toBe(201);
    expect(await passwordLogin(email)).toEqual({ status: 200, sub: primary.user_id });
  });

  it("links with link_with (the secondary's ID token) using the primary's own update:current_user_identities token", async () => {
    const primary = await emailUser(tenant, unique("self-p"));
    const secondary = await emailUser(tenant, unique("self-s"));
    const implicit = async (userId: string, params: Record<string, string>) => {
      const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, nonce: "n", ...params }, { host, cookie: await sessionCookie(tenant, userId, client.client_id) });
      return redirectParams(res).fragment;
    };
    const idToken = (await implicit(secondary.user_id, { response_type: "id_token", scope: "openid" })).get("id_token") as string;
    const own = (await implicit(primary.user_id, { response_type: "token", scope: "openid update:current_user_identities", audience: MANAGEMENT })).get("access_token") as string;
    expect(own).toBeTruthy();
    const userHost = { host };
    const asUser = (target: string, body: unknown) =>
      call(`/api/v2${path(target, "/identities")}`, { method: "POST", ...userHost, headers: { authorization: `Bearer ${own}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await asUser(primary.user_id, { provider: "email", user_id: secondary.user_id })).status).toBe(403);
    const other = await emailUser(tenant, unique("self-o"));
    expect((await asUser(other.user_id, { link_with: idToken })).status).toBe(403);
    expect((await asUser(primary.user_id, { link_with: "not.a.jwt" })).status).toBe(400);
    const res = await asUser(primary.user_id, { link_with: idToken });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as UserBody["identities"]).map((i) => i.user_id)).toEqual([primary.user_id.slice(6), secondary.user_id.slice(6)]);
  });
});

describe("DELETE /users/{id}/identities/{provider}/{user_id}", () => {
  it("unlinks: the remaining identities come back and the account is a user of its own again", async () => {
    const primary = await emailUser(tenant, unique("u-p"));
    const secondary = await emailUser(tenant, unique("u-s"));
    const bare = secondary.user_id.slice("email|".length);
    await link(primary.user_id, { provider: "email", user_id: bare });
    expect(await failure(await api(tenant, "DELETE", path(primary.user_id, `/identities/email/${primary.user_id.slice(6)}`)))).toMatchObject({ status: 400, message: "Main identity cannot be removed." });
    expect((await api(tenant, "DELETE", path(primary.user_id, "/identities/email/nobody"))).status).toBe(404);
    const res = await api(tenant, "DELETE", path(primary.user_id, `/identities/email/${bare}`));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ connection: "email", provider: "email", user_id: primary.user_id.slice(6), isSocial: false }]);
    const back = (await (await api(tenant, "GET", path(secondary.user_id))).json()) as UserBody;
    expect(back.identities).toEqual([{ connection: "email", provider: "email", user_id: bare, isSocial: false }]);
    expect((await api(tenant, "DELETE", path(primary.user_id, `/identities/email/${bare}`))).status).toBe(404);
  });
});

describe("PATCH /users/{id} with connection (SPEC §4.2)", () => {
  it("updates the linked identity of that connection and answers the primary with all identities", async () => {
    const primary = await createUser(tenant, { connection: DB, email: unique("pc"), password: PASSWORD, user_metadata: { mine: 1 } });
    const phone = await createUser(tenant, { connection: "sms", phone_number: `+1555${Math.floor(1e6 + Math.random() * 8e6)}` });
    await link(primary.user_id, { provider: "sms", user_id: phone.user_id });
    const res = await api(tenant, "PATCH", path(primary.user_id), { connection: "sms", phone_number: "+15559990000", phone_verified: true, user_metadata: { theirs: 2 } });
    expect(res.status, await res.clone().text()).toBe(200);
    const out = (await res.json()) as UserBody;
    expect(out.user_id).toBe(primary.user_id);
    expect(out.user_metadata).toEqual({ mine: 1 });
    expect(out.identities[1]).toMatchObject({ connection: "sms", profileData: { phone_number: "+15559990000", phone_verified: true } });
    // Without connection, or with the primary's own, the primary changes.
    const own = (await (await api(tenant, "PATCH", path(primary.user_id), { connection: DB, email_verified: true })).json()) as UserBody;
    expect(own.email_verified).toBe(true);
  });

  it("is 404 for a connection the user has no identity in, and refuses what a linked identity cannot change", async () => {
    const primary = await createUser(tenant, { connection: DB, email: unique("pc2"), password: PASSWORD });
    const secondary = await emailUser(tenant, unique("pc2-s"));
    await link(primary.user_id, { provider: "email", user_id: secondary.user_id });
    expect(await failure(await api(tenant, "PATCH", path(primary.user_id), { connection: "sms", phone_verified: true }))).toEqual({
      status: 404,
      message: 'The user has no identity in the connection "sms"',
      errorCode: "inexistent_identity",
    });
    expect((await failure(await api(tenant, "PATCH", path(primary.user_id), { connection: "email", password: "Another-Pw-22" }))).status).toBe(400);
    expect((await failure(await api(tenant, "PATCH", path(primary.user_id), { connection: "email", name: "x" }))).message).toMatch(/Cannot update name of a linked identity/);
    expect((await failure(await api(tenant, "PATCH", path(primary.user_id), { connection: "email", phone_number: "+15551112222" }))).status).toBe(400);
    const verified = (await (await api(tenant, "PATCH", path(primary.user_id), { connection: "email", email_verified: true })).json()) as UserBody;
    expect(verified.identities[1]?.profileData).toMatchObject({ email_verified: true });
    expect((await api(tenant, "PATCH", path(secondary.user_id), { name: "x" })).status).toBe(404);
  });
});

describe("DELETE of a primary user", () => {
  it("deletes its linked accounts with it", async () => {
    const primary = await emailUser(tenant, unique("dp"));
    const secondary = await emailUser(tenant, unique("ds"));
    await link(primary.user_id, { provider: "email", user_id: secondary.user_id });
    expect((await api(tenant, "DELETE", path(primary.user_id))).status).toBe(204);
    expect(await (await api(tenant, "GET", `/users-by-email?email=${encodeURIComponent(secondary.email as string)}`)).json()).toEqual([]);
    expect((await api(tenant, "POST", "/users", { connection: "email", email: secondary.email })).status).toBe(201);
  });
});
