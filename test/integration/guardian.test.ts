import { env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { fieldCipher } from "../../src/shared/crypto/encryption";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { BASE, call, createTenant, mgmt } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, recoveryCodesOf, setFactors, TestBrowser, totpSecretOf } from "../helpers/mfa";
import { logsOf, relay, tenantSql } from "../helpers/outbox";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/** Issue 12 points 1 and 2: guardian management routes and enrollment tickets (SPEC §3.4, §4.2). */

afterEach(() => setClock());

const onTenant = (tenant: string, method: string, path: string, body?: unknown) =>
  mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });

describe("factors, policies and the SMS provider", () => {
  let tenant: string;
  beforeAll(async () => {
    tenant = await createTenant();
  });

  it("lists the factors, switches one on, and answers 404 for an unknown name and 400 for a bad body", async () => {
    const before = (await (await onTenant(tenant, "GET", "/guardian/factors")).json()) as { name: string; enabled: boolean }[];
    expect(before.map((f) => f.name)).toEqual(["sms", "otp", "webauthn-roaming", "webauthn-platform", "recovery-code"]);
    expect(before.find((f) => f.name === "otp")?.enabled).toBe(false);
    const put = await onTenant(tenant, "PUT", "/guardian/factors/otp", { enabled: true });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ enabled: true });
    const after = (await (await onTenant(tenant, "GET", "/guardian/factors")).json()) as { name: string; enabled: boolean }[];
    expect(after.find((f) => f.name === "otp")?.enabled).toBe(true);

    const unknown = await onTenant(tenant, "PUT", "/guardian/factors/push-notification", { enabled: true });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ errorCode: "inexistent_factor" });
    for (const body of [{ enabled: "yes" }, {}, { enabled: true, extra: 1 }, "[]"]) {
      expect((await onTenant(tenant, "PUT", "/guardian/factors/sms", body)).status).toBe(400);
    }
  });

  it("sets the policy to all-applications and back to none; refuses what it does not support", async () => {
    expect(await (await onTenant(tenant, "GET", "/guardian/policies")).json()).toEqual([]);
    expect(await (await onTenant(tenant, "PUT", "/guardian/policies", ["all-applications"])).json()).toEqual(["all-applications"]);
    expect(await (await onTenant(tenant, "GET", "/guardian/policies")).json()).toEqual(["all-applications"]);
    expect((await onTenant(tenant, "PUT", "/guardian/policies", ["confidence-score"])).status).toBe(400);
    expect((await onTenant(tenant, "PUT", "/guardian/policies", { policies: [] })).status).toBe(400);
    expect(await (await onTenant(tenant, "PUT", "/guardian/policies", [])).json()).toEqual([]);
  });

  it("selects the SMS provider (sms and phone paths alike)", async () => {
    expect(await (await onTenant(tenant, "GET", "/guardian/factors/sms/selected-provider")).json()).toEqual({ provider: "auth0" });
    expect(await (await onTenant(tenant, "PUT", "/guardian/factors/phone/selected-provider", { provider: "twilio" })).json()).toEqual({ provider: "twilio" });
    expect(await (await onTenant(tenant, "GET", "/guardian/factors/sms/selected-provider")).json()).toEqual({ provider: "twilio" });
    expect((await onTenant(tenant, "PUT", "/guardian/factors/sms/selected-provider", { provider: "carrier-pigeon" })).status).toBe(400);
  });

  it("stores the Twilio auth token encrypted and never returns it", async () => {
    const put = await onTenant(tenant, "PUT", "/guardian/factors/sms/providers/twilio", { sid: "AC0123456789abcdef", auth_token: "super-secret-token", from: "+14155550100" });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ sid: "AC0123456789abcdef", from: "+14155550100", messaging_service_sid: null });
    const got = await (await onTenant(tenant, "GET", "/guardian/factors/sms/providers/twilio")).text();
    expect(got).not.toContain("super-secret-token");
    const [row] = await tenantSql<{ value: string }>(tenant, "SELECT value FROM _settings WHERE key = 'guardian_sms_provider:twilio'");
    expect(row?.value).not.toContain("super-secret-token");
    const enc = JSON.parse(String(row?.value)).auth_token_enc as string;
    expect(await (await fieldCipher(env.ENCRYPTION_KEY)).decrypt(enc, "guardian_sms_provider:twilio")).toBe("super-secret-token");
    // A later update without auth_token keeps it.
    await onTenant(tenant, "PUT", "/guardian/factors/sms/providers/twilio", { from: "+14155550199" });
    const [kept] = await tenantSql<{ value: string }>(tenant, "SELECT value FROM _settings WHERE key = 'guardian_sms_provider:twilio'");
    expect(JSON.parse(String(kept?.value)).auth_token_enc).toBe(enc);
    expect((await onTenant(tenant, "GET", "/guardian/factors/sms/providers/sns")).status).toBe(404);
    expect((await onTenant(tenant, "PUT", "/guardian/factors/sms/providers/twilio", { from: "not a number" })).status).toBe(400);

    await relay(tenant);
    const logs = await logsOf(tenant);
    expect(JSON.stringify(logs)).not.toContain("super-secret-token");
    expect(logs.some((l) => l.details.event_type === "guardian_factor.updated" && l.type === "sapi")).toBe(true);
  });
});

describe("enrollment tickets", () => {
  let tenant: string;
  let userId: string;
  beforeAll(async () => {
    tenant = await createTenant();
    userId = (await seedUser(tenant, "ticket@example.com")).user_id;
  });

  const newTicket = async (body: Record<string, unknown> = {}) => {
    const res = await onTenant(tenant, "POST", "/guardian/enrollments/ticket", { user_id: userId, ...body });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as { ticket_id: string; ticket_url: string };
  };

  it("needs OTP or SMS enabled (400 naming the fix) and an existing user (404)", async () => {
    const refused = await onTenant(tenant, "POST", "/guardian/enrollments/ticket", { user_id: userId });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(/otp or sms factor enabled/);
    await setFactors(tenant, { otp: true });
    expect((await onTenant(tenant, "POST", "/guardian/enrollments/ticket", { user_id: "auth0|ghost" })).status).toBe(404);
    expect((await onTenant(tenant, "POST", "/guardian/enrollments/ticket", { user_id: userId, factor: "phone" })).status).toBe(400);
    expect((await onTenant(tenant, "POST", "/guardian/enrollments/ticket", { user_id: userId, nope: 1 })).status).toBe(400);
    const { ticket_id, ticket_url } = await newTicket();
    expect(ticket_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const url = new URL(ticket_url);
    expect(url.pathname).toBe("/u2/guardian/enroll");
    expect(url.searchParams.get("ticket")).toBe(ticket_id);
    expect(url.searchParams.get("tenant_id")).toBe(tenant);
    const [row] = await tenantSql<{ ticket_hash: string }>(tenant, "SELECT ticket_hash FROM enrollment_tickets ORDER BY created_at DESC LIMIT 1");
    expect(row?.ticket_hash).not.toBe(ticket_id);
  });

  it("redeems once through tenant_id on the apex, enrolls TOTP, and ends with a done page", async () => {
    await setFactors(tenant, { otp: true });
    const { ticket_url } = await newTicket();
    const url = new URL(ticket_url);
    const browser = new TestBrowser(url.host);
    const redeemed = await browser.get(url.pathname + url.search);
    expect(redeemed.status).toBe(302);
    expect(locationOf(redeemed)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const entry = await browser.follow(redeemed);
    // The tenant chosen by the query stays on every hop of the MFA pages.
    expect(locationOf(entry)).toMatch(new RegExp(`^/u2/mfa/totp-enrollment\\?state=mfa_\\w+&tenant_id=${tenant}$`));
    const enrollmentPath = locationOf(entry);
    const page = await browser.get(enrollmentPath);
    const html = await page.text();
    const done = await browser.post(enrollmentPath, { _csrf: csrfOf(html), code: totpCode(totpSecretOf(html), Date.now()) });
    const codes = recoveryCodesOf(await done.clone().text());
    expect(codes).toHaveLength(10);
    const state = new URL(enrollmentPath, BASE).searchParams.get("state");
    const doneHtml = await done.text();
    expect(doneHtml).toContain(`action="/u2/mfa/continue?state=${state}&amp;tenant_id=${tenant}"`);
    const finished = await browser.post(`/u2/mfa/continue?state=${state}&tenant_id=${tenant}`, { _csrf: csrfOf(doneHtml) });
    expect(finished.status).toBe(200);
    expect(await finished.text()).toContain("You&#39;re all set");

    const again = await new TestBrowser(url.host).get(url.pathname + url.search);
    expect(again.status).toBe(403);
    expect(errorCodeOf(await again.text())).toBe("TICKET_ALREADY_USED");
    const methods = (await (await onTenant(tenant, "GET", `/users/${encodeURIComponent(userId)}/authentication-methods`)).json()) as { id: string; type: string }[];
    expect(methods.map((m) => m.type)).toEqual(["totp", "recovery-code"]);

    const enrollment = await onTenant(tenant, "GET", `/guardian/enrollments/${encodeURIComponent(methods[0]?.id as string)}`);
    expect(await enrollment.json()).toMatchObject({ id: methods[0]?.id, status: "confirmed" });
    expect((await onTenant(tenant, "DELETE", `/guardian/enrollments/${encodeURIComponent(methods[0]?.id as string)}`)).status).toBe(204);
    expect((await onTenant(tenant, "GET", `/guardian/enrollments/${encodeURIComponent(methods[0]?.id as string)}`)).status).toBe(404);
  });

  it("is single use under concurrency: of 8 simultaneous redemptions exactly one starts an enrollment", async () => {
    const { ticket_url } = await newTicket();
    const url = new URL(ticket_url);
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(url.pathname + url.search, { redirect: "manual" })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([302, 403, 403, 403, 403, 403, 403, 403]);
  });

  it("expires after 5 days (403), with an injected clock", async () => {
    const t0 = Date.now();
    setClock(() => t0);
    const { ticket_url } = await newTicket();
    const url = new URL(ticket_url);
    setClock(() => t0 + 5 * 24 * 3600 * 1000 + 1000);
    const expired = await call(url.pathname + url.search, { redirect: "manual" });
    expect(expired.status).toBe(403);
    expect(errorCodeOf(await expired.text())).toBe("TICKET_EXPIRED");
    expect((await call("/u2/guardian/enroll?ticket=not-a-real-ticket-value-at-all", { redirect: "manual", headers: { "tenant-id": tenant } })).status).toBe(400);
  });

  it("works regardless of the policy and shows the factor choice when both OTP and SMS are enabled", async () => {
    await setFactors(tenant, { otp: true, sms: true });
    const other = (await seedUser(tenant, `choice-${crypto.randomUUID().slice(0, 6)}@example.com`)).user_id;
    const res = await onTenant(tenant, "POST", "/guardian/enrollments/ticket", { user_id: other });
    const url = new URL(((await res.json()) as { ticket_url: string }).ticket_url);
    const browser = new TestBrowser(url.host);
    const entry = await browser.follow(await browser.get(url.pathname + url.search));
    expect(locationOf(entry)).toMatch(/^\/u2\/mfa\/factors/);
    const choice = await browser.get(locationOf(entry));
    const html = await choice.text();
    expect(html).toContain("Authenticator app");
    expect(html).toContain("Text message");
    expect(html).not.toContain("Security key");
  });

  it("send_mail sends the ticket URL through the email provider (the development sink here)", async () => {
    const { ticket_url } = await newTicket({ send_mail: true });
    const res = await call(`/__dev/messages?to=ticket%40example.com&tenant_id=${tenant}`);
    expect(res.status).toBe(200);
    const { messages } = (await res.json()) as { messages: { channel: string; body: string }[] };
    expect(messages[0]).toMatchObject({ channel: "email" });
    expect(messages[0]?.body).toContain(ticket_url);
  });
});

describe("who can reach the guardian routes", () => {
  it("refuses no token, a missing scope, another tenant, an end user and a revoked token on every route", async () => {
    const kit = await reachKit([
      "read:guardian_factors",
      "update:guardian_factors",
      "read:mfa_policies",
      "update:mfa_policies",
      "create:guardian_enrollment_tickets",
      "read:guardian_enrollments",
      "delete:guardian_enrollments",
    ]);
    const routes: [string, string, string, unknown?][] = [
      ["GET", "/guardian/factors", "read:guardian_factors"],
      ["PUT", "/guardian/factors/otp", "update:guardian_factors", { enabled: true }],
      ["GET", "/guardian/policies", "read:mfa_policies"],
      ["PUT", "/guardian/policies", "update:mfa_policies", []],
      ["GET", "/guardian/factors/sms/selected-provider", "read:guardian_factors"],
      ["PUT", "/guardian/factors/sms/selected-provider", "update:guardian_factors", { provider: "auth0" }],
      ["GET", "/guardian/factors/sms/providers/twilio", "read:guardian_factors"],
      ["PUT", "/guardian/factors/sms/providers/twilio", "update:guardian_factors", { from: "+14155550100" }],
      ["POST", "/guardian/enrollments/ticket", "create:guardian_enrollment_tickets", { user_id: "auth0|x" }],
      ["GET", "/guardian/enrollments/totp%7Cdev_x", "read:guardian_enrollments"],
      ["DELETE", "/guardian/enrollments/totp%7Cdev_x", "delete:guardian_enrollments"],
    ];
    for (const [method, path, scope, body] of routes) {
      await expectRefusals(kit, method, path, scope, body);
      const allowed = await mgmt(method, path, { token: kit.allowed, ...(body !== undefined ? { body } : {}) });
      expect([200, 404], `${method} ${path}`).toContain(allowed.status);
    }
    const spec = (await (await mgmt("GET", "/spec")).json()) as { paths: Record<string, Record<string, { "x-scope": string }>> };
    for (const [method, path, scope] of routes) {
      const template = path.replace(/\/otp$/, "/{name}").replace(/\/twilio$/, "/{provider}").replace(/totp%7Cdev_x$/, "{id}");
      expect(spec.paths[template]?.[method.toLowerCase()]?.["x-scope"], `${method} ${template}`).toBe(scope);
    }
  });
});
