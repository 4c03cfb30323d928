import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { runAlarm, sinkTo } from "../helpers/jobs";
import { errorCodeOf } from "../helpers/mfa";
import { injectClock, relay, tenantSql } from "../helpers/outbox";
import { expectRefusals, reachKit } from "../helpers/route-reach";
import { api, DB } from "../helpers/users";
import { sealEmailText } from "../../src/shared/messaging/sealed-mail";
import { finishVerificationEmail } from "../../src/objects/tenant/jobs/email-verification";
import { Sql } from "../../src/objects/sql";

/**
 * Issue 14 point 5: POST /api/v2/jobs/verification-email sends the user an email with a single-use,
 * expiring link that marks the address verified (the reference platform's verification email job).
 */

let tenant: string;

beforeAll(async () => {
  tenant = await createTenant();
});

afterEach(() => setClock());

async function newUser(t = tenant): Promise<{ user_id: string; email: string }> {
  const email = `verify-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const res = await api(t, "POST", "/users", { connection: DB, email, password: "Sufficient-Pw-1" });
  expect(res.status).toBe(201);
  const user = (await res.json()) as { user_id: string; email_verified: boolean };
  expect(user.email_verified).toBe(false);
  return { user_id: user.user_id, email };
}

async function requestEmail(body: Record<string, unknown>, t = tenant) {
  return api(t, "POST", "/jobs/verification-email", body);
}

/** The link in the newest verification email to an address, once the relay (the alarm) sent it. */
async function linkTo(email: string, t = tenant): Promise<string> {
  await runAlarm(t);
  const [mail] = await sinkTo(t, email);
  expect(mail?.subject).toBe("Verify your email");
  const link = /https?:\/\/\S+\/u2\/email-verification\?\S+/.exec(mail?.text ?? "")?.[0];
  expect(link).toBeTruthy();
  return link as string;
}

const follow = (link: string) => call(new URL(link).pathname + new URL(link).search);
const verified = async (userId: string, t = tenant) => ((await (await api(t, "GET", `/users/${encodeURIComponent(userId)}`)).json()) as { email_verified: boolean }).email_verified;

describe("POST /jobs/verification-email", () => {
  it("answers 201 with a pending verification_email job, completed once the relay sent a link that marks the email verified, once", async () => {
    const user = await newUser();
    const res = await requestEmail({ user_id: user.user_id });
    expect(res.status, await res.clone().text()).toBe(201);
    const job = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(job).sort()).toEqual(["created_at", "id", "status", "type"]);
    expect(job).toMatchObject({ type: "verification_email", status: "pending", id: expect.stringMatching(/^job_[A-Za-z0-9]{16}$/) });
    expect(Number.isNaN(Date.parse(String(job.created_at)))).toBe(false);

    const link = await linkTo(user.email);
    expect(await (await api(tenant, "GET", `/jobs/${job.id}`)).json()).toEqual({ ...job, status: "completed" });
    expect(await verified(user.user_id)).toBe(false);
    const first = await follow(link);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("Email verified");
    expect(await verified(user.user_id)).toBe(true);

    const second = await follow(link);
    expect(second.status).toBe(400);
    expect(errorCodeOf(await second.text())).toBe("INVALID_TICKET");
  });

  it("two concurrent uses of one link: exactly one verifies", async () => {
    const user = await newUser();
    expect((await requestEmail({ user_id: user.user_id })).status).toBe(201);
    const link = await linkTo(user.email);
    const statuses = (await Promise.all([follow(link), follow(link), follow(link)])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 400, 400]);
  });

  it("the link expires after 5 days", async () => {
    const t = await createTenant();
    const clock = await injectClock(t, Date.now());
    const user = await newUser(t);
    expect((await requestEmail({ user_id: user.user_id }, t)).status).toBe(201);
    const link = await linkTo(user.email, t);
    clock.now = Date.now() + 432_000_000 + 1_000;
    setClock(() => clock.now);
    const res = await follow(link);
    expect(res.status).toBe(400);
    expect(errorCodeOf(await res.text())).toBe("INVALID_TICKET");
    expect(await verified(user.user_id, t)).toBe(false);
  });

  it("a link does not verify an address the user no longer has", async () => {
    const user = await newUser();
    expect((await requestEmail({ user_id: user.user_id })).status).toBe(201);
    const link = await linkTo(user.email);
    expect((await api(tenant, "PATCH", `/users/${encodeURIComponent(user.user_id)}`, { email: `changed-${user.email}` })).status).toBe(200);
    const res = await follow(link);
    expect(res.status).toBe(409);
    expect(errorCodeOf(await res.text())).toBe("EMAIL_CHANGED");
    expect(await verified(user.user_id)).toBe(false);
  });

  it("names the application in the email when client_id is given", async () => {
    const client = await seedClient(tenant);
    const user = await newUser();
    expect((await requestEmail({ user_id: user.user_id, client_id: client.client_id })).status).toBe(201);
    await runAlarm(tenant);
    const [mail] = await sinkTo(tenant, user.email);
    expect(mail?.text).toContain("you use with Test app");
  });

  it("refuses an unknown user, application, organization or identity, unknown fields and bad types, sending nothing", async () => {
    const user = await newUser();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ user_id: "auth0|nobody" }, 404, "inexistent_user"],
      [{ user_id: user.user_id, client_id: "no-such-client" }, 404, "inexistent_client"],
      [{ user_id: user.user_id, organization_id: "org_nope" }, 404, "inexistent_organization"],
      [{ user_id: user.user_id, identity: { user_id: "other", provider: "google-oauth2" } }, 400, "invalid_body"],
      [{ user_id: user.user_id, favourite: true }, 400, "invalid_body"],
      [{ user_id: 42 }, 400, "invalid_body"],
      [{}, 400, "invalid_body"],
    ];
    for (const [body, status, errorCode] of cases) {
      const res = await requestEmail(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as { errorCode: string }).errorCode).toBe(errorCode);
    }
    await runAlarm(tenant);
    expect(await sinkTo(tenant, user.email)).toEqual([]);
    const bad = await mgmt("POST", "/jobs/verification-email", { headers: { "tenant-id": tenant }, body: "{not json" });
    expect(bad.status).toBe(400);
  });

  it("the identity field picks the primary identity too", async () => {
    const user = await newUser();
    const bare = user.user_id.replace(/^auth0\|/, "");
    expect((await requestEmail({ user_id: user.user_id, identity: { user_id: bare, provider: "auth0" } })).status).toBe(201);
    expect(await follow(await linkTo(user.email)).then((r) => r.status)).toBe(200);
  });
});

describe("verification email jobs, the outbox and the alarm's job lane", () => {
  /** A job started in the object itself, its text sealed for `sealedFor` (the user's address unless told). */
  const start = async (user: { user_id: string; email: string }, text: string, t = tenant, sealedFor = user.email) => {
    const sealed = await sealEmailText(env.ENCRYPTION_KEY, sealedFor, text);
    return runInDurableObject(env.TENANT.getByName(t), (o: TenantObject) =>
      o.emailVerification().start({
        user_id: user.user_id,
        email: user.email,
        connection: null,
        client_id: null,
        organization_id: null,
        ticket_hash: crypto.randomUUID().replaceAll("-", "").padEnd(43, "x"),
        expires_at: Date.now() + 60_000,
        message: { subject: "Verify your email", sealed_text: sealed },
        audit: { actor: { type: "system", id: null } },
      }),
    );
  };

  it("the job and its email commit together: the email waits sealed in the outbox (no link in clear) and survives the worker", async () => {
    const t = await createTenant();
    const user = await newUser(t);
    await injectClock(t); // the relay runs only when this test drives it
    const res = await requestEmail({ user_id: user.user_id }, t);
    expect(res.status).toBe(201);
    const job = (await res.json()) as { id: string; status: string };
    // Nothing was sent by the request itself: the email is an outbox event of the commit that made the job.
    expect(await sinkTo(t, user.email)).toEqual([]);
    const rows = await tenantSql<{ payload: string }>(t, "SELECT payload FROM outbox WHERE event_type = 'internal.send_email' AND processed_at IS NULL");
    expect(rows).toHaveLength(1);
    const payload = JSON.parse(String(rows[0]?.payload)) as Record<string, string>;
    expect(payload).toMatchObject({ to: user.email, subject: "Verify your email", job_id: job.id, sealed_text: expect.stringMatching(/^enc:v1:/) });
    expect(JSON.stringify(payload)).not.toContain("email-verification");
    expect(payload.text).toBeUndefined();
    expect(((await (await api(t, "GET", `/jobs/${job.id}`)).json()) as { status: string }).status).toBe("pending");
    // The relay (the alarm) delivers it and completes the job.
    const link = await linkTo(user.email, t);
    expect(((await (await api(t, "GET", `/jobs/${job.id}`)).json()) as { status: string }).status).toBe("completed");
    expect((await follow(link)).status).toBe(200);
  });

  it("an email the relay cannot send, retried until it is dead-lettered, fails its job with the reason", async () => {
    const t = await createTenant();
    const user = await newUser(t);
    const clock = await injectClock(t);
    // Sealed for another recipient: the text does not open for this one (the seal is bound to the address).
    const job = await start(user, "a link", t, `someone-else-${user.email}`);
    for (let attempt = 0; attempt < 5; attempt++) {
      expect(((await (await api(t, "GET", `/jobs/${job.id}`)).json()) as { status: string }).status).toBe("pending");
      await relay(t, 1);
      clock.now += 3_600_000; // past the longest backoff, well within the 24-hour job retention
    }
    expect(await (await api(t, "GET", `/jobs/${job.id}`)).json()).toMatchObject({ id: job.id, status: "failed" });
    const [row] = await tenantSql<{ status_details: string }>(t, "SELECT status_details FROM jobs WHERE id = ?", job.id);
    expect(row?.status_details).toMatch(/^The verification email could not be sent: email: /);
    const [dead] = await tenantSql<{ id: string; dead_lettered_at: number | null }>(t, "SELECT id, dead_lettered_at FROM outbox WHERE event_type = 'internal.send_email'");
    expect(dead?.dead_lettered_at).not.toBeNull();
    expect(await sinkTo(t, user.email)).toEqual([]);
    // Listed with the failed events, its text still sealed.
    const failed = await (await api(t, "GET", "/failed-events")).text();
    expect(failed).toContain(String(dead?.id));
    expect(failed).not.toContain("a link");
    // Replayed and sent after all (as a later delivery would), the email completes its failed job.
    const sent = await runInDurableObject(env.TENANT.getByName(t), (_o: TenantObject, state: DurableObjectState) =>
      finishVerificationEmail(new Sql(state.storage.sql), job.id, true, null, Date.now()),
    );
    expect(sent?.status).toBe("completed");
  });

  it("a verification_email job is never taken by the import/export lane; the relay completes it", async () => {
    const user = await newUser();
    const job = await start(user, "Open https://example.test/u2/email-verification?ticket=abc");
    expect(job.status).toBe("pending");
    await runAlarm(tenant, 2);
    expect(((await (await api(tenant, "GET", `/jobs/${job.id}`)).json()) as { status: string }).status).toBe("completed");
    expect(await tenantSql(tenant, "SELECT 1 FROM job_rows WHERE job_id = ?", job.id)).toEqual([]);
    const [mail] = await sinkTo(tenant, user.email);
    expect(mail?.text).toBe("Open https://example.test/u2/email-verification?ticket=abc");
  });
});

describe("who can reach POST /jobs/verification-email", () => {
  it("needs update:users: no token 401; end user, other tenant, revoked token and a missing scope 403", async () => {
    const kit = await reachKit(["update:users"]);
    await expectRefusals(kit, "POST", "/jobs/verification-email", "update:users", { user_id: "auth0|nobody" });
    const res = await mgmt("POST", "/jobs/verification-email", { token: kit.allowed, headers: { "tenant-id": kit.tenant }, body: { user_id: "auth0|nobody" } });
    expect(res.status).toBe(404);
    const readOnly = await reachKit(["read:users", "create:users"], kit.tenant);
    const refused = await mgmt("POST", "/jobs/verification-email", { token: readOnly.allowed, headers: { "tenant-id": kit.tenant }, body: { user_id: "auth0|nobody" } });
    expect(refused.status).toBe(403);
  });
});
