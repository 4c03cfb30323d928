import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { recoveryCodeHash } from "../../src/worker/login/mfa/recovery-codes";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { call, createTenant, mgmt, token } from "../helpers/api";
import { seedClient, type TestClient } from "../helpers/flows";
import { setFactors, setPolicy } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";

/**
 * Issue 25 finding 6: the tenant's MFA policy applies to the passwordless OTP grant. Under
 * `all-applications` it answers 403 `mfa_required` with an `mfa_token` (the reference platform's
 * /oauth/token), and the MFA grants (`mfa-otp`, `mfa-oob` after POST /mfa/challenge, `mfa-recovery-code`)
 * complete the login with `mfa` in the amr.
 */

const PASSWORDLESS = "http://auth0.com/oauth/grant-type/passwordless/otp";
const MFA_OTP = "http://auth0.com/oauth/grant-type/mfa-otp";
const MFA_OOB = "http://auth0.com/oauth/grant-type/mfa-oob";
const MFA_RECOVERY = "http://auth0.com/oauth/grant-type/mfa-recovery-code";
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
let tenant: string;
let host: string;
let client: TestClient;
let other: TestClient;
let ipCounter = 0;
const nextIp = () => `198.51.100.${(ipCounter++ % 250) + 1}`;

afterEach(() => setClock());

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant);
  other = await seedClient(tenant);
  const res = await mgmt("POST", "/connections", { headers: { "tenant-id": tenant }, body: { name: "email", strategy: "email", enabled_clients: [client.client_id, other.client_id] } });
  expect(res.status).toBe(201);
  await setFactors(tenant, { otp: true, sms: true, "recovery-code": true });
  await setPolicy(tenant, ["all-applications"]);
});

const newEmail = () => `mfag-${crypto.randomUUID().slice(0, 8)}@example.com`;
const newPhone = () => `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;

const tokenAt = (body: Record<string, unknown>, who: TestClient = client, at = host) => token({ client_id: who.client_id, client_secret: who.client_secret, ...body }, { host: at });

async function sentCode(to: string): Promise<string> {
  const { messages } = (await (await call(`/__dev/messages?to=${encodeURIComponent(to)}`, { host })).json()) as { messages: { body: string }[] };
  const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1];
  if (!code) throw new Error(`no code for ${to}`);
  return code;
}

/** The passwordless OTP grant for an email: /passwordless/start, then the code from the development sink. */
async function passwordless(email: string, scope = "openid email") {
  const started = await call("/passwordless/start", {
    method: "POST",
    host,
    headers: { "content-type": "application/json", "cf-connecting-ip": nextIp() },
    body: JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret, connection: "email", email, send: "code", authParams: { scope } }),
  });
  expect(started.status).toBe(200);
  return tokenAt({ grant_type: PASSWORDLESS, username: email, otp: await sentCode(email), realm: "email" });
}

const userIdOf = async (email: string) => (await tenantSql<{ user_id: string }>(tenant, "SELECT user_id FROM users WHERE email = ?", email))[0]?.user_id as string;

async function enroll(userId: string, body: Record<string, unknown>) {
  const res = await mgmt("POST", `/users/${encodeURIComponent(userId)}/authentication-methods`, { headers: { "tenant-id": tenant }, body });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** A passwordless user with the given factors, and the `mfa_token` of a fresh passwordless login. */
async function mfaLogin(factors: { totp?: boolean; phone?: string; recovery?: string }) {
  const email = newEmail();
  const first = await passwordless(email);
  expect(first.status).toBe(403);
  const userId = await userIdOf(email);
  if (factors.totp) await enroll(userId, { type: "totp", totp_secret: SECRET });
  if (factors.phone) await enroll(userId, { type: "phone", phone_number: factors.phone });
  if (factors.recovery) await tenantSql(tenant, "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)", userId, await recoveryCodeHash(factors.recovery), Date.now());
  const res = await passwordless(email);
  expect(res.status, await res.clone().text()).toBe(403);
  const body = (await res.json()) as { error: string; error_description: string; mfa_token: string };
  return { email, userId, body, mfaToken: body.mfa_token };
}

const otpNow = () => totpCode(SECRET, Date.now());

describe("the passwordless OTP grant under an MFA policy", () => {
  it("answers mfa_required with an mfa_token instead of tokens when the user has TOTP enrolled", async () => {
    const { body } = await mfaLogin({ totp: true });
    expect(body).toMatchObject({ error: "mfa_required", error_description: "Multifactor authentication required", mfa_token: expect.any(String) });
    expect(Object.keys(body).sort()).toEqual(["error", "error_description", "mfa_token"]);
  });

  it("answers mfa_registration_required (no tokens) to a user with no factor the token endpoint can verify, and starts no session", async () => {
    const email = newEmail();
    const res = await passwordless(email);
    expect(res.status).toBe(403);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: "mfa_registration_required" });
    expect(body).not.toHaveProperty("access_token");
    expect(await tenantSql(tenant, "SELECT id FROM sessions WHERE user_id = ?", await userIdOf(email))).toEqual([]);
  });
});

describe("mfa-otp", () => {
  it("completes the login with a TOTP code: tokens with amr otp+mfa, a session, and the mfa_token is single-use", async () => {
    const { mfaToken, userId } = await mfaLogin({ totp: true });
    const res = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() });
    expect(res.status, await res.clone().text()).toBe(200);
    const tokens = (await res.json()) as { id_token: string; access_token: string };
    expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: userId, amr: ["otp", "mfa"] });
    const sessions = await tenantSql<{ id: string; amr: string }>(tenant, "SELECT id, amr FROM sessions WHERE user_id = ?", userId);
    expect(sessions).toHaveLength(1);
    expect(JSON.parse(String(sessions[0]?.amr))).toEqual(["otp", "mfa"]);
    expect(decodeJwt(tokens.access_token).sid).toBe(sessions[0]?.id);

    const reused = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() });
    expect(reused.status).toBe(403);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid mfa_token" });
  });

  it("refuses a wrong code (the token stays usable), and locks after five wrong codes like the login pages", async () => {
    const { mfaToken } = await mfaLogin({ totp: true });
    const wrong = String((Number(otpNow()) + 1) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 5; i++) {
      const res = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: wrong });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid otp_code." });
    }
    const locked = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() });
    expect(locked.status).toBe(429);
    expect(await locked.json()).toMatchObject({ error: "too_many_requests" });
  });

  it("refuses an expired mfa_token (10 minutes), another client's, another tenant's, and an unknown one", async () => {
    const { mfaToken } = await mfaLogin({ totp: true });
    const otherClient = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() }, other);
    expect(otherClient.status).toBe(403);
    expect(await otherClient.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid mfa_token" });

    const tenantB = await createTenant();
    const clientB = await seedClient(tenantB);
    const otherTenant = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() }, clientB, `${tenantB}.localhost:8787`);
    expect(otherTenant.status).toBe(403);
    expect(await otherTenant.json()).toMatchObject({ error: "invalid_grant" });

    const unknown = await tokenAt({ grant_type: MFA_OTP, mfa_token: "not-a-token", otp: otpNow() });
    expect(await unknown.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid mfa_token" });

    const later = Date.now() + 10 * 60 * 1000 + 1000;
    setClock(() => later);
    const expired = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: totpCode(SECRET, later) });
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ error: "invalid_grant", error_description: "mfa_token is expired" });
  });

  it("answers invalid_request for missing parameters, and unauthorized_client to a client not allowed the grant", async () => {
    const { mfaToken } = await mfaLogin({ totp: true });
    for (const params of [{ mfa_token: mfaToken }, { otp: "123456" }]) {
      const res = await tokenAt({ grant_type: MFA_OTP, ...params });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_request" });
    }
    const restricted = await seedClient(tenant, { grant_types: [PASSWORDLESS] });
    const res = await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() }, restricted);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "unauthorized_client" });
  });
});

describe("POST /mfa/challenge and mfa-oob", () => {
  const challenge = (body: Record<string, unknown>, who: TestClient = client) =>
    call("/mfa/challenge", { method: "POST", host, headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: who.client_id, client_secret: who.client_secret, ...body }) });

  it("texts a code for an oob challenge; mfa-oob with the oob_code and the texted binding_code completes the login", async () => {
    const phone = newPhone();
    const { mfaToken, userId } = await mfaLogin({ phone });
    const res = await challenge({ mfa_token: mfaToken, challenge_type: "oob" });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { challenge_type: string; oob_code: string; binding_method: string };
    expect(body).toMatchObject({ challenge_type: "oob", oob_code: expect.any(String), binding_method: "prompt" });
    const code = await sentCode(phone);

    const wrongOob = await tokenAt({ grant_type: MFA_OOB, mfa_token: mfaToken, oob_code: "wrong", binding_code: String((Number(code) + 1) % 1_000_000).padStart(6, "0") });
    expect(wrongOob.status).toBe(403);
    expect(await wrongOob.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid binding_code." });
    const missing = await tokenAt({ grant_type: MFA_OOB, mfa_token: mfaToken, oob_code: body.oob_code });
    expect(missing.status).toBe(400);

    const ok = await tokenAt({ grant_type: MFA_OOB, mfa_token: mfaToken, oob_code: body.oob_code, binding_code: code });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(decodeJwt(((await ok.json()) as { id_token: string }).id_token)).toMatchObject({ sub: userId, amr: ["otp", "sms", "mfa"] });
  });

  it("answers otp for a TOTP user, unsupported_challenge_type when no factor fits, and refuses bad clients and tokens", async () => {
    const { mfaToken } = await mfaLogin({ totp: true });
    expect(await (await challenge({ mfa_token: mfaToken, challenge_type: "otp" })).json()).toEqual({ challenge_type: "otp" });
    const noOob = await challenge({ mfa_token: mfaToken, challenge_type: "oob" });
    expect(noOob.status).toBe(400);
    expect(await noOob.json()).toMatchObject({ error: "unsupported_challenge_type" });
    expect(await (await challenge({ challenge_type: "otp" })).json()).toMatchObject({ error: "invalid_request" });
    expect(await (await challenge({ mfa_token: mfaToken }, other)).json()).toMatchObject({ error: "invalid_grant" });
    const badSecret = await challenge({ mfa_token: mfaToken, client_secret: "wrong" });
    expect(badSecret.status).toBe(401);
    expect(await badSecret.json()).toMatchObject({ error: "invalid_client" });
    const restricted = await seedClient(tenant, { grant_types: [PASSWORDLESS] });
    expect(await (await challenge({ mfa_token: mfaToken }, restricted)).json()).toMatchObject({ error: "unauthorized_client" });
  });
});

describe("mfa-recovery-code", () => {
  it("completes the login with a recovery code, used once, and answers a new recovery_code that works next time", async () => {
    const { mfaToken, email, userId } = await mfaLogin({ totp: true, recovery: "ABCDE-FGHJK" });
    const wrong = await tokenAt({ grant_type: MFA_RECOVERY, mfa_token: mfaToken, recovery_code: "ZZZZZ-ZZZZZ" });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid recovery code." });

    const res = await tokenAt({ grant_type: MFA_RECOVERY, mfa_token: mfaToken, recovery_code: "abcde fghjk" });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { id_token: string; recovery_code: string };
    expect(decodeJwt(body.id_token)).toMatchObject({ sub: userId, amr: ["otp", "recovery-code", "mfa"] });
    expect(body.recovery_code).toMatch(/^[A-Z2-9]{5}-[A-Z2-9]{5}$/);

    const next = (await (await passwordless(email)).json()) as { mfa_token: string };
    const reusedCode = await tokenAt({ grant_type: MFA_RECOVERY, mfa_token: next.mfa_token, recovery_code: "ABCDE-FGHJK" });
    expect(reusedCode.status).toBe(403);
    const fresh = await tokenAt({ grant_type: MFA_RECOVERY, mfa_token: next.mfa_token, recovery_code: body.recovery_code });
    expect(fresh.status, await fresh.clone().text()).toBe(200);
  });
});

describe("who can use an mfa_token (issue 25 audit)", () => {
  const challengeWith = (body: Record<string, unknown>, who: TestClient = client, at = host) =>
    call("/mfa/challenge", { method: "POST", host: at, headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: who.client_id, client_secret: who.client_secret, ...body }) });
  /** /mfa/challenge and each MFA grant with this token, and what each answered. */
  async function everyUse(mfaToken: string, who: TestClient = client, at = host) {
    const answers: [string, Response][] = [
      ["/mfa/challenge", await challengeWith({ mfa_token: mfaToken, challenge_type: "otp oob" }, who, at)],
      [MFA_OTP, await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() }, who, at)],
      [MFA_OOB, await tokenAt({ grant_type: MFA_OOB, mfa_token: mfaToken, oob_code: "x", binding_code: "123456" }, who, at)],
      [MFA_RECOVERY, await tokenAt({ grant_type: MFA_RECOVERY, mfa_token: mfaToken, recovery_code: "ABCDE-FGHJK" }, who, at)],
    ];
    return answers;
  }
  async function expectRefused(answers: [string, Response][], description: string | RegExp) {
    for (const [use, res] of answers) {
      expect(res.status, use).toBe(403);
      const body = (await res.json()) as { error: string; error_description: string; access_token?: string };
      expect(body.error, use).toBe("invalid_grant");
      expect(body.error_description, use).toMatch(description);
      expect(body.access_token, use).toBeUndefined();
    }
  }

  it("another client's, another tenant's, an unknown token and an access token in its place are refused by /mfa/challenge and every MFA grant", async () => {
    const { mfaToken } = await mfaLogin({ totp: true, phone: newPhone(), recovery: "ABCDE-FGHJK" });
    await expectRefused(await everyUse(mfaToken, other), "Invalid mfa_token");
    const tenantB = await createTenant();
    const clientB = await seedClient(tenantB);
    await expectRefused(await everyUse(mfaToken, clientB, `${tenantB}.localhost:8787`), "Invalid mfa_token");
    await expectRefused(await everyUse("not-a-token"), "Invalid mfa_token");
    const passed = (await (await tokenAt({ grant_type: MFA_OTP, mfa_token: (await mfaLogin({ totp: true })).mfaToken, otp: otpNow() })).json()) as { access_token: string };
    await expectRefused(await everyUse(passed.access_token), "Invalid mfa_token");
    // None of these spent the token: its own client completes the login with it.
    const ok = await tokenAt({ grant_type: MFA_RECOVERY, mfa_token: mfaToken, recovery_code: "ABCDE-FGHJK" });
    expect(ok.status, await ok.clone().text()).toBe(200);
  });

  it("a used token and a token whose user was blocked since are refused by /mfa/challenge and every MFA grant", async () => {
    const used = await mfaLogin({ totp: true, phone: newPhone(), recovery: "ABCDE-FGHJK" });
    expect((await tokenAt({ grant_type: MFA_OTP, mfa_token: used.mfaToken, otp: otpNow() })).status).toBe(200);
    await expectRefused(await everyUse(used.mfaToken), "Invalid mfa_token");

    const blocked = await mfaLogin({ totp: true, phone: newPhone(), recovery: "ABCDE-FGHJK" });
    expect((await mgmt("PATCH", `/users/${encodeURIComponent(blocked.userId)}`, { headers: { "tenant-id": tenant }, body: { blocked: true } })).status).toBe(200);
    await expectRefused(await everyUse(blocked.mfaToken), "user is blocked");
    expect(await tenantSql(tenant, "SELECT id FROM sessions WHERE user_id = ?", blocked.userId)).toEqual([]);
  });

  it("a code texted under one mfa_token does not complete another token of the same user (mfa-oob)", async () => {
    const phone = newPhone();
    const first = await mfaLogin({ phone });
    const sent = (await (await challengeWith({ mfa_token: first.mfaToken, challenge_type: "oob" })).json()) as { oob_code: string };
    const code = await sentCode(phone);
    const second = (await (await passwordless(first.email)).json()) as { mfa_token: string };
    const crossed = await tokenAt({ grant_type: MFA_OOB, mfa_token: second.mfa_token, oob_code: sent.oob_code, binding_code: code });
    expect(crossed.status).toBe(403);
    expect(await crossed.json()).toMatchObject({ error: "invalid_grant", error_description: "Invalid binding_code." });
    const own = await tokenAt({ grant_type: MFA_OOB, mfa_token: first.mfaToken, oob_code: sent.oob_code, binding_code: code });
    expect(own.status, await own.clone().text()).toBe(200);
  });
});

describe("token exchange under the MFA policy", () => {
  const exchange = (subjectToken: string) =>
    tokenAt({ grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", subject_token: subjectToken, subject_token_type: "urn:ietf:params:oauth:token-type:access_token" });

  it("exchanges a user's token whose login passed MFA, and refuses one whose login did not (minted before the policy)", async () => {
    const { mfaToken } = await mfaLogin({ totp: true });
    const passed = (await (await tokenAt({ grant_type: MFA_OTP, mfa_token: mfaToken, otp: otpNow() })).json()) as { access_token: string };
    const ok = await exchange(passed.access_token);
    expect(ok.status, await ok.clone().text()).toBe(200);

    await setPolicy(tenant, []);
    let before: { access_token: string };
    try {
      const res = await passwordless(newEmail());
      expect(res.status).toBe(200);
      before = (await res.json()) as { access_token: string };
    } finally {
      await setPolicy(tenant, ["all-applications"]);
    }
    const refused = await exchange(before.access_token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "invalid_grant", error_description: "subject_token's login did not pass multifactor authentication" });
  });
});

describe("discovery", () => {
  it("lists the MFA grants", async () => {
    const doc = (await (await call("/.well-known/openid-configuration", { host })).json()) as { grant_types_supported: string[] };
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining([MFA_OTP, MFA_OOB, MFA_RECOVERY]));
  });
});
