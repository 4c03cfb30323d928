import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt } from "../helpers/api";
import { seedClient, type TestClient } from "../helpers/flows";
import { logsOf, relay } from "../helpers/outbox";

/** Issue 12 point 6: POST /passwordless/start and the passwordless OTP grant (SPEC §4.1). */

const GRANT = "http://auth0.com/oauth/grant-type/passwordless/otp";
let tenant: string;
let host: string;
let client: TestClient;
let connections: Record<string, string>;
let ipCounter = 0;
/** A fresh client address per call, so the per-IP limiter only counts where a test means it to. */
const nextIp = () => `198.51.100.${(ipCounter++ % 250) + 1}`;

afterEach(() => setClock());

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant);
  connections = {};
  for (const name of ["email", "sms"]) {
    const res = await mgmt("POST", "/connections", { headers: { "tenant-id": tenant }, body: { name, strategy: name, enabled_clients: [client.client_id] } });
    expect(res.status).toBe(201);
    connections[name] = ((await res.json()) as { id: string }).id;
  }
});

function start(body: Record<string, unknown>, ip = nextIp()) {
  return call("/passwordless/start", { method: "POST", host, headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify(body) });
}

const emailStart = (email: string, extra: Record<string, unknown> = {}) =>
  start({ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email, send: "code", ...extra });

function grant(params: Record<string, string>, who: TestClient = client) {
  return call("/oauth/token", {
    method: "POST",
    host,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: GRANT, client_id: who.client_id, client_secret: who.client_secret, ...params }),
  });
}

async function sentCode(to: string): Promise<string> {
  const { messages } = (await (await call(`/__dev/messages?to=${encodeURIComponent(to)}`, { host })).json()) as { messages: { body: string }[] };
  const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1];
  if (!code) throw new Error(`no code for ${to}`);
  return code;
}

const newEmail = () => `pwl-${crypto.randomUUID().slice(0, 8)}@example.com`;

describe("email passwordless", () => {
  it("sends a code, exchanges it once for tokens, creates the user on first login and binds the refresh token to a session", async () => {
    const email = newEmail();
    const started = await emailStart(email.toUpperCase(), { authParams: { scope: "openid email offline_access" } });
    expect(started.status).toBe(200);
    expect(await started.json()).toMatchObject({ _id: expect.any(String), email, email_verified: false });
    const otp = await sentCode(email);

    const res = await grant({ username: `  ${email}  `, otp, realm: "email" });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const tokens = (await res.json()) as { id_token: string; access_token: string; refresh_token?: string; scope: string };
    expect(tokens.scope).toBe("openid email offline_access");
    const claims = decodeJwt(tokens.id_token);
    expect(claims).toMatchObject({ email, email_verified: true, amr: ["otp"] });
    expect(String(claims.sub)).toMatch(/^email\|/);
    expect(tokens.refresh_token).toBeTruthy();

    const replay = await grant({ username: email, otp, realm: "email" });
    expect(replay.status).toBe(403);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant", error_description: "Wrong email or verification code." });

    const sessions = (await (await mgmt("GET", `/users/${encodeURIComponent(String(claims.sub))}/sessions`, { headers: { "tenant-id": tenant } })).json()) as {
      id: string;
      authentication: { methods: { name: string }[] };
    }[];
    expect(sessions).toHaveLength(1);
    // The session says how its login was made: a one-time code sent by email.
    expect(sessions[0]?.authentication.methods.map((m) => m.name)).toEqual(["email"]);
    expect(decodeJwt(tokens.access_token).sid).toBe(sessions[0]?.id);
    expect((await mgmt("DELETE", `/sessions/${sessions[0]?.id}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    const refreshed = await call("/oauth/token", {
      method: "POST",
      host,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id, client_secret: client.client_secret }),
    });
    expect(((await refreshed.json()) as { error_description: string }).error_description).toBe("Refresh token has been revoked");

    // The second login finds the same user.
    await emailStart(email);
    const again = (await (await grant({ username: email, otp: await sentCode(email), realm: "email", scope: "openid" })).json()) as { id_token: string; refresh_token?: string };
    expect(decodeJwt(again.id_token).sub).toBe(claims.sub);
    expect(again.refresh_token).toBeUndefined();

    await relay(tenant);
    const types = (await logsOf(tenant)).filter((l) => l.user_id === claims.sub || l.type === "cs").map((l) => l.type);
    expect(types).toEqual(expect.arrayContaining(["cs", "ss", "s"]));
  });

  it("refuses a code after 3 wrong guesses, after 5 minutes, and for another client; exactly one of two racing exchanges wins", async () => {
    const email = newEmail();
    await emailStart(email);
    const otp = await sentCode(email);
    for (let i = 0; i < 3; i++) expect((await grant({ username: email, otp: otp === "000000" ? "111111" : "000000", realm: "email" })).status).toBe(403);
    expect((await grant({ username: email, otp, realm: "email" })).status).toBe(403);

    const t0 = Date.now();
    setClock(() => t0);
    await emailStart(email);
    const late = await sentCode(email);
    setClock(() => t0 + 5 * 60_000 + 1);
    expect((await grant({ username: email, otp: late, realm: "email" })).status).toBe(403);
    setClock();

    await emailStart(email);
    const other = await seedClient(tenant);
    const code = await sentCode(email);
    expect((await grant({ username: email, otp: code, realm: "email" }, other)).status).toBe(403);
    const race = await Promise.all([grant({ username: email, otp: code, realm: "email" }), grant({ username: email, otp: code, realm: "email" })]);
    expect(race.map((r) => r.status).sort()).toEqual([200, 403]);
  });

  it("does not create users when the connection disables sign-up", async () => {
    await mgmt("PATCH", `/connections/${connections.email}`, { headers: { "tenant-id": tenant }, body: { options: { disable_signup: true } } });
    try {
      const email = newEmail();
      await emailStart(email);
      const res = await grant({ username: email, otp: await sentCode(email), realm: "email" });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error_description: string }).error_description).toMatch(/Signups are disabled/);
    } finally {
      await mgmt("PATCH", `/connections/${connections.email}`, { headers: { "tenant-id": tenant }, body: { options: {} } });
    }
  });

  it("validates the start request: bad bodies 400, a confidential client without its secret 401, links refused", async () => {
    const email = newEmail();
    const cases: Array<[Record<string, unknown> | string, number]> = [
      [{ client_id: client.client_id, client_secret: client.client_secret, connection: "email" }, 400],
      [{ client_id: client.client_id, client_secret: client.client_secret, connection: "magic", email }, 400],
      [{ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email: "not-an-email" }, 400],
      [{ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email, send: "link" }, 400],
      [{ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email, authParams: { scope: { nested: true } } }, 400],
      [{ client_id: client.client_id, connection: "email", email }, 401],
      [{ client_id: "nobody", connection: "email", email }, 401],
      ["{broken", 400],
    ];
    for (const [body, status] of cases) {
      const res = await call("/passwordless/start", { method: "POST", host, headers: { "content-type": "application/json", "cf-connecting-ip": nextIp() }, body: typeof body === "string" ? body : JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).toBe(status);
    }
    const publicClient = await seedClient(tenant, { token_endpoint_auth_method: "none" });
    const res = await start({ client_id: publicClient.client_id, connection: "email", email, send: "code" });
    expect(res.status).toBe(200);
  });

  it("is rate-limited per identifier (5 codes per 15 minutes) and per IP address", async () => {
    const email = newEmail();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await emailStart(email)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const ip = "203.0.113.77";
    let limited = false;
    for (let i = 0; i < 25 && !limited; i++) limited = (await start({ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email: newEmail() }, ip)).status === 429;
    expect(limited).toBe(true);
  });
});

describe("SMS passwordless", () => {
  it("sends a code to a phone number and logs in (creating the sms user once)", async () => {
    const phone = `+4477009${String(Math.floor(Math.random() * 100_000)).padStart(5, "0")}`;
    const started = await start({ client_id: client.client_id, client_secret: client.client_secret, connection: "sms", phone_number: phone, send: "code" });
    expect(started.status).toBe(200);
    expect(await started.json()).toMatchObject({ phone_number: phone, phone_verified: false });
    const res = await grant({ username: phone, otp: await sentCode(phone), realm: "sms" });
    expect(res.status, await res.clone().text()).toBe(200);
    const claims = decodeJwt(((await res.json()) as { id_token: string }).id_token);
    expect(String(claims.sub)).toMatch(/^sms\|/);
    expect(claims.amr).toEqual(["sms"]);
    await start({ client_id: client.client_id, client_secret: client.client_secret, connection: "sms", phone_number: phone });
    const again = decodeJwt(((await (await grant({ username: phone, otp: await sentCode(phone), realm: "sms" })).json()) as { id_token: string }).id_token);
    expect(again.sub).toBe(claims.sub);
  });

  it("discovery and the Auth API OpenAPI document list the grant and /passwordless/start", async () => {
    const discovery = (await (await call("/.well-known/openid-configuration", { host })).json()) as { grant_types_supported: string[]; claims_supported: string[] };
    expect(discovery.grant_types_supported).toContain(GRANT);
    expect(discovery.claims_supported).toContain("amr");
    const spec = (await (await call("/.well-known/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(["/passwordless/start", "/u2/guardian/enroll"]));
    expect(JSON.stringify(spec.paths["/oauth/token"])).toContain(GRANT);
  });
});
