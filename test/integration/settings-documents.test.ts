import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { fieldCipher } from "../../src/shared/crypto/encryption";
import { SETTINGS_DOCUMENTS } from "../../src/shared/schemas/settings/documents";
import { call, createTenant, mgmt } from "../helpers/api";
import { seedClient, seedUser } from "../helpers/flows";
import { csrfOf, locationOf, passwordLogin, setFactors, setPolicy } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 1: the settings the deploy CLI and Terraform read and write as one document each (guardian
 * templates and providers, breached passwords, bot detection, CAPTCHA, risk assessment, supplemental signals).
 */

let tenant: string;
const api = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });
const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

/** A valid write for each document, and what a read shows after it. */
const WRITES: Record<string, { body: Record<string, unknown>; shows: Record<string, unknown> }> = {
  guardian_sms_templates: {
    body: { enrollment_message: "Enroll with {{code}}", verification_message: "{{code}} for {{tenant.friendly_name}}" },
    shows: { enrollment_message: "Enroll with {{code}}", verification_message: "{{code}} for {{tenant.friendly_name}}" },
  },
  guardian_phone_message_types: { body: { message_types: ["sms"] }, shows: { message_types: ["sms"] } },
  guardian_phone_settings: { body: { otp_length: 6 }, shows: { otp_length: 6, otp_expiration_time: 300 } },
  guardian_email_settings: { body: { otp_expiration_time: 300 }, shows: { otp_length: 6, otp_expiration_time: 300 } },
  guardian_webauthn_roaming: { body: { user_verification: "required" }, shows: { user_verification: "required", override_relying_party: false } },
  guardian_webauthn_platform: { body: { override_relying_party: false }, shows: { override_relying_party: false } },
  guardian_duo: { body: { ikey: "DIXXXXXXXXXXXXXXXXXX", skey: "duo-secret-key", host: "api-123.duosecurity.com" }, shows: { ikey: "DIXXXXXXXXXXXXXXXXXX", host: "api-123.duosecurity.com" } },
  guardian_push_apns: { body: { sandbox: true, bundle_id: "com.example.app" }, shows: { sandbox: true, bundle_id: "com.example.app", enabled: false } },
  guardian_push_fcm: { body: { server_key: "fcm-key" }, shows: {} },
  guardian_push_fcmv1: { body: { server_credentials: '{"type":"service_account"}' }, shows: {} },
  guardian_push_sns: { body: { aws_access_key_id: "AKIAEXAMPLE", aws_secret_access_key: "sns-secret", aws_region: "eu-west-1" }, shows: { aws_access_key_id: "AKIAEXAMPLE", aws_region: "eu-west-1" } },
  guardian_push_selected_provider: { body: { provider: "sns" }, shows: { provider: "sns" } },
  guardian_settings: { body: { mfa_session_inactivity_timeout: 7200 }, shows: { mfa_session_inactivity_timeout: 7200, display_remember_me_checkbox: true } },
  breached_password_detection: {
    body: { enabled: true, shields: ["block"], stage: { "pre-user-registration": { shields: ["block"] } } },
    shows: { enabled: true, shields: ["block"], method: "standard", stage: { "pre-user-registration": { shields: ["block"] }, "pre-change-password": { shields: [] } } },
  },
  bot_detection: { body: { bot_detection_level: "high", allowlist: ["10.0.0.0/8"] }, shows: { bot_detection_level: "high", allowlist: ["10.0.0.0/8"], challenge_password_policy: "never" } },
  captcha: { body: { active_provider_id: "recaptcha_v2", recaptcha_v2: { site_key: "site", secret: "captcha-secret" } }, shows: { active_provider_id: "recaptcha_v2", recaptcha_v2: { site_key: "site" } } },
  phone_provider_protection: { body: { type: "exponential" }, shows: { type: "exponential" } },
  risk_assessment: { body: { enabled: true }, shows: { enabled: true } },
  risk_assessment_new_device: { body: { remember_for: 10 }, shows: { remember_for: 10 } },
  supplemental_signals: { body: { akamai_enabled: true }, shows: { akamai_enabled: true } },
};

beforeAll(async () => {
  tenant = await createTenant();
});

describe("settings documents: read, write, refuse", () => {
  it("has a sample write for every document (the table below covers them all)", () => {
    expect(Object.keys(WRITES).sort()).toEqual(SETTINGS_DOCUMENTS.map((d) => d.key).sort());
  });

  for (const doc of SETTINGS_DOCUMENTS) {
    it(`${doc.paths[0]}: reads the defaults, writes with ${doc.verbs.join(" and ")}, and refuses a malformed body with 400`, async () => {
      const own = await createTenant();
      const as = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": own }, ...(body !== undefined ? { body } : {}) });
      for (const path of doc.paths) {
        const first = await as("GET", path);
        expect(first.status, path).toBe(200);
        expect(await json(first)).toEqual(Object.fromEntries(Object.entries(doc.defaults)));
      }
      const sample = WRITES[doc.key];
      if (!sample) throw new Error(`no sample for ${doc.key}`);
      for (const verb of doc.verbs) {
        const written = await as(verb.toUpperCase(), doc.paths[0] as string, sample.body);
        expect(written.status, `${verb} ${doc.paths[0]}: ${await written.clone().text()}`).toBe(200);
        expect(await json(written)).toMatchObject(sample.shows);
      }
      for (const path of doc.paths) {
        const read = await json(await as("GET", path));
        expect(read).toMatchObject(sample.shows);
        expect(JSON.stringify(read)).not.toMatch(/secret-key|sns-secret|captcha-secret|fcm-key|service_account|enc:v1/);
      }
      const bad = await as(doc.verbs[0]?.toUpperCase() as string, doc.paths[0] as string, { not_a_field: 1 });
      expect(bad.status).toBe(400);
      expect(await json(bad)).toMatchObject({ statusCode: 400, error: "Bad Request" });
    });
  }

  it("seals secret fields at rest under their own context and never returns them", async () => {
    const res = await api("PUT", "/guardian/factors/push-notification/providers/sns", { aws_access_key_id: "AKIA1", aws_secret_access_key: "very-secret" });
    expect(res.status).toBe(200);
    expect(await json(res)).not.toHaveProperty("aws_secret_access_key");
    const [row] = await tenantSql<{ value: string }>(tenant, "SELECT value FROM _settings WHERE key = 'doc:guardian_push_sns'");
    const stored = JSON.parse(String(row?.value)) as { aws_secret_access_key: string };
    expect(stored.aws_secret_access_key).toMatch(/^enc:v1:/);
    const cipher = await fieldCipher(env.ENCRYPTION_KEY);
    expect(await cipher.decrypt(stored.aws_secret_access_key, "settings_secret:guardian_push_sns:aws_secret_access_key")).toBe("very-secret");
  });

  it("refuses voice as a phone message type (no voice calls here) and a template without {{code}}", async () => {
    const voice = await api("PUT", "/guardian/factors/phone/message-types", { message_types: ["sms", "voice"] });
    expect(voice.status).toBe(400);
    expect(JSON.stringify(await voice.json())).toContain("voice calls are not offered");
    const noCode = await api("PUT", "/guardian/factors/sms/templates", { enrollment_message: "hello", verification_message: "hi {{code}}" });
    expect(noCode.status).toBe(400);
  });

  it("keeps the other stage of breached-password detection when a PATCH names one", async () => {
    const own = await createTenant();
    const as = (method: string, body?: unknown) => mgmt(method, "/attack-protection/breached-password-detection", { headers: { "tenant-id": own }, ...(body ? { body } : {}) });
    await as("PATCH", { stage: { "pre-change-password": { shields: ["block"] } } });
    await as("PATCH", { stage: { "pre-user-registration": { shields: ["admin_notification"] } } });
    expect((await json(await as("GET"))).stage).toEqual({ "pre-user-registration": { shields: ["admin_notification"] }, "pre-change-password": { shields: ["block"] } });
  });

  it("records a write in the tenant's logs without the secret", async () => {
    const own = await createTenant();
    await mgmt("PATCH", "/attack-protection/captcha", { headers: { "tenant-id": own }, body: { recaptcha_v2: { site_key: "s", secret: "audit-secret" } } });
    const logs = await (await mgmt("GET", "/logs?q=type:sapi", { headers: { "tenant-id": own } })).text();
    expect(logs).not.toContain("audit-secret");
  });
});

describe("the SMS templates are what an MFA text says", () => {
  it("sends the tenant's enrollment_message while a phone is enrolled, with {{ code }} and {{tenant.friendly_name}} rendered", async () => {
    const own = await createTenant();
    const client = await seedClient(own, { callbacks: ["https://app.example.com/callback"] });
    await setFactors(own, { sms: true, "recovery-code": false });
    await setPolicy(own, ["all-applications"]);
    await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": own }, body: { friendly_name: "Acme" } });
    const put = await mgmt("PUT", "/guardian/factors/phone/templates", {
      headers: { "tenant-id": own },
      body: { enrollment_message: "Welcome! Code {{ code }} enrolls you at {{tenant.friendly_name}}", verification_message: "{{code}} signs you in to {{tenant.friendly_name}}" },
    });
    expect(put.status).toBe(200);
    const email = `t-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const phone = `+1415556${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
    await seedUser(own, email, "p4ssw0rd!");
    const { browser, res } = await passwordLogin(own, client.client_id, email, "p4ssw0rd!");
    const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
    const entry = await browser.follow(res);
    const form = await (await browser.follow(entry)).text();
    await browser.post(`/u2/mfa/phone-enrollment?state=${state}`, { _csrf: csrfOf(form), phone_number: phone });
    const sink = await call(`/__dev/messages?to=${encodeURIComponent(phone)}`, { host: `${own}.localhost:8787` });
    const { messages } = (await sink.json()) as { messages: { body: string }[] };
    expect(messages[0]?.body).toMatch(/^Welcome! Code \d{6} enrolls you at Acme$/);
  });
});

describe("who can reach the settings documents", () => {
  let kit: ReachKit;
  beforeAll(async () => {
    kit = await reachKit(["read:guardian_factors", "update:guardian_factors", "read:mfa_policies", "update:mfa_policies", "read:attack_protection", "update:attack_protection"]);
  });

  for (const doc of SETTINGS_DOCUMENTS) {
    it(`${doc.paths.join(", ")}: only the tenant's own client with ${doc.read} / ${doc.write}`, async () => {
      for (const path of doc.paths) {
        await expectRefusals(kit, "GET", path, doc.read);
        for (const verb of doc.verbs) await expectRefusals(kit, verb.toUpperCase(), path, doc.write, WRITES[doc.key]?.body);
        const allowed = await mgmt("GET", path, { token: kit.allowed, headers: { "tenant-id": kit.tenant } });
        expect(allowed.status).toBe(200);
      }
    });
  }
});
