import bcrypt from "bcryptjs";
import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { createTenant } from "../helpers/api";
import { redirectParams, seedClient, type TestClient, tokenForm } from "../helpers/flows";
import { dbConnectionId, drain, postImport } from "../helpers/jobs";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, setFactors, setPolicy } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";
import { api } from "../helpers/users";

/**
 * Issue 14 point 5: the user file's `mfa_factors` (the reference platform's MFA enrollment import: totp
 * {secret}, phone {value}, email {value}) become the user's enrolled authenticators, TOTP secrets sealed.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "Imported-Pw-1";
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

let tenant: string;
let connectionId: string;
let client: TestClient;
const hash = bcrypt.hashSync(PASSWORD, 4);

beforeAll(async () => {
  tenant = await createTenant();
  connectionId = await dbConnectionId(tenant);
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  await setFactors(tenant, { otp: true, sms: true });
  await setPolicy(tenant, ["all-applications"]);
});

afterEach(() => setClock());

async function importRows(rows: unknown[], fields: Record<string, string> = {}) {
  const res = await postImport(tenant, { connection_id: connectionId, send_completion_email: "false", ...fields }, rows);
  expect(res.status, await res.clone().text()).toBe(201);
  const { id } = (await res.json()) as { id: string };
  return { id, job: await drain(tenant, id) };
}

async function userByEmail(email: string): Promise<{ user_id: string }> {
  const [user] = (await (await api(tenant, "GET", `/users-by-email?email=${encodeURIComponent(email)}`)).json()) as Array<{ user_id: string }>;
  return user as { user_id: string };
}

describe("importing mfa_factors", () => {
  it("an imported TOTP user must pass MFA, with a code computed from the imported secret", async () => {
    const email = `totp-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const { job } = await importRows([{ email, email_verified: true, password_hash: hash, mfa_factors: [{ totp: { secret: SECRET } }] }]);
    expect(job).toMatchObject({ status: "completed", summary: { inserted: 1, failed: 0 } });

    const t0 = Date.now();
    setClock(() => t0);
    const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    expect(res.status).toBe(302);
    const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
    // No enrollment screen: the imported authenticator is already enrolled, so the login goes to its challenge.
    const step = await browser.follow(res);
    expect(locationOf(step)).toMatch(/^\/u2\/mfa\/totp-challenge/);
    const page = await browser.follow(step);
    const csrf = csrfOf(await page.text());
    const wrong = await browser.post(`/u2/mfa/totp-challenge?state=${state}`, { _csrf: csrf, code: totpCode("KRSXG5CTMVRXEZLU", t0) });
    expect(wrong.status).toBe(403);
    expect(errorCodeOf(await wrong.text())).toBe("INVALID_CODE");
    const ok = await browser.post(`/u2/mfa/totp-challenge?state=${state}`, { _csrf: csrf, code: totpCode(SECRET, t0) });
    expect(ok.status).toBe(302);
    const code = redirectParams(ok).query.get("code") as string;
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      `${tenant}.localhost:8787`,
    );
    expect(tokens.status).toBe(200);
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).amr).toContain("mfa");
  });

  it("imported factors are confirmed authentication methods; the TOTP secret is sealed at rest and never shown", async () => {
    const email = `both-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const { id } = await importRows([{ email, mfa_factors: [{ totp: { secret: SECRET } }, { phone: { value: "+1 (415) 555-0100" } }] }]);
    const user = await userByEmail(email);
    const methods = (await (await api(tenant, "GET", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`)).json()) as Array<Record<string, unknown>>;
    expect(methods.map((m) => m.type).sort()).toEqual(["phone", "totp"]);
    expect(methods.every((m) => m.confirmed === true)).toBe(true);
    expect(methods.find((m) => m.type === "phone")).toMatchObject({ phone_number: "+14155550100" });
    expect(JSON.stringify(methods)).not.toContain(SECRET);
    const stored = await tenantSql<{ totp_secret_enc: string }>(tenant, "SELECT totp_secret_enc FROM authentication_methods WHERE user_id = ? AND type = 'totp'", user.user_id);
    expect(stored[0]?.totp_secret_enc).toBeTruthy();
    expect(stored[0]?.totp_secret_enc).not.toContain(SECRET);
    // Nor was the secret ever staged in clear with the job's rows.
    const staged = await tenantSql<{ data: string }>(tenant, "SELECT data FROM job_rows WHERE job_id = ?", id);
    expect(staged.length).toBe(1);
    expect(staged[0]?.data).not.toContain(SECRET);
  });

  it("with upsert, an imported factor replaces the user's enrollment of the same type", async () => {
    const email = `upsert-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await importRows([{ email, mfa_factors: [{ phone: { value: "+14155550100" } }] }]);
    const { job } = await importRows([{ email, mfa_factors: [{ phone: { value: "+14155550199" } }] }], { upsert: "true" });
    expect(job).toMatchObject({ summary: { updated: 1, failed: 0 } });
    const user = await userByEmail(email);
    const methods = (await (await api(tenant, "GET", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`)).json()) as Array<Record<string, unknown>>;
    expect(methods).toHaveLength(1);
    expect(methods[0]).toMatchObject({ type: "phone", phone_number: "+14155550199" });
  });

  it("an invalid factor is that row's error with a clear code; the user is not created; valid rows still import", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const rows = [
      { email: `email-${tag}@example.com`, mfa_factors: [{ email: { value: "otp@example.com" } }] },
      { email: `badsecret-${tag}@example.com`, mfa_factors: [{ totp: { secret: "not base32!" } }] },
      { email: `short-${tag}@example.com`, mfa_factors: [{ totp: { secret: "JBSWY3DP" } }] },
      { email: `twototp-${tag}@example.com`, mfa_factors: [{ totp: { secret: SECRET } }, { totp: { secret: SECRET } }] },
      { email: `both-keys-${tag}@example.com`, mfa_factors: [{ totp: { secret: SECRET }, phone: { value: "+14155550100" } }] },
      { email: `phone-${tag}@example.com`, mfa_factors: [{ phone: { value: "555-CALL-NOW" } }] },
      { email: `notarray-${tag}@example.com`, mfa_factors: { totp: { secret: SECRET } } },
      { email: `forged-${tag}@example.com`, $mfa: [{ type: "totp", id: "totp|dev_x", secret_enc: "forged" }] },
      { email: `fine-${tag}@example.com`, mfa_factors: [{ phone: { value: "+14155550100" } }] },
    ];
    const { id, job } = await importRows(rows);
    expect(job).toMatchObject({ summary: { inserted: 1, failed: 8, total: 9 } });
    const errors = (await (await api(tenant, "GET", `/jobs/${id}/errors`)).json()) as Array<{ user: Record<string, unknown>; errors: Array<{ code: string; path?: string }> }>;
    const codeOf = (prefix: string) => errors.find((e) => String(e.user.email).startsWith(prefix))?.errors[0];
    expect(codeOf("email-")).toMatchObject({ code: "UNSUPPORTED_MFA_FACTOR", path: "#/mfa_factors/0/email" });
    expect(codeOf("badsecret-")).toMatchObject({ code: "INVALID_MFA_FACTOR", path: "#/mfa_factors/0" });
    expect(codeOf("short-")).toMatchObject({ code: "INVALID_MFA_FACTOR" });
    expect(codeOf("twototp-")).toMatchObject({ code: "INVALID_MFA_FACTOR", path: "#/mfa_factors/1" });
    expect(codeOf("both-keys-")).toMatchObject({ code: "INVALID_MFA_FACTOR" });
    expect(codeOf("phone-")).toMatchObject({ code: "INVALID_MFA_FACTOR" });
    expect(codeOf("notarray-")).toMatchObject({ code: "INVALID_TYPE", path: "#/mfa_factors" });
    expect(codeOf("forged-")).toMatchObject({ code: "OBJECT_ADDITIONAL_PROPERTIES" });
    // The errors show the rows without their factors, so no secret leaks through them.
    expect(JSON.stringify(errors)).not.toContain(SECRET);
    expect(errors.every((e) => !("mfa_factors" in e.user) && !("$mfa" in e.user))).toBe(true);
    const created = (await (await api(tenant, "GET", `/users-by-email?email=${encodeURIComponent(`email-${tag}@example.com`)}`)).json()) as unknown[];
    expect(created).toEqual([]);
  });
});
