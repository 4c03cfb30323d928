import { gunzipSync } from "node:zlib";
import bcrypt from "bcryptjs";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "./helpers/browser";
import { browserSuite } from "./helpers/browser-suite";

/**
 * Issue 14 point 5 end to end against `wrangler dev`: the reference platform's SDK (`auth0` 7,
 * `jobs.usersImports.create`) imports a users file with bcrypt hashes and invalid rows, polls `jobs.get` until
 * the alarm-driven job completes, reads `jobs.errors.get`; an imported user then logs in through the login
 * page in headless Chromium with the password behind the imported hash; `jobs.usersExports.create` closes the
 * loop with a downloadable, signed location. The completion email, an imported TOTP factor and
 * `jobs.verificationEmail.create` (its link followed in Chromium) go through the development sink.
 */

const DB = "Username-Password-Authentication";
const run = Date.now().toString(36);

describe("bulk user import and export through the auth0 SDK", () => {
  const suite = browserSuite("jobs.e2e", "Import App");
  const { context, authorizeUrl, exchange } = suite;
  // The suite's fields under their own names, once its beforeAll has set them.
  let { server, admin, callbacks } = suite;
  beforeAll(() => ({ server, admin, callbacks } = suite));
  const imported = { email: `imported-${run}@example.com`, password: `Legacy-Pw-${run}` };

  /** Polls `jobs.get` until the job leaves pending/processing. */
  async function settled(id: string) {
    for (let i = 0; i < 120; i++) {
      const job = await admin.jobs.get(id);
      if (job.status === "completed" || job.status === "failed") return job;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`job ${id} did not settle`);
  }

  let userId: string;

  it("jobs.usersImports.create stages the file, jobs.get reports it completed, jobs.errors.get lists the invalid rows", async () => {
    const connection = (await admin.connections.list({ name: DB })).data[0];
    const rows = [
      { email: imported.email, email_verified: true, user_id: `legacy-${run}`, name: "Imported Person", password_hash: bcrypt.hashSync(imported.password, 8) },
      { email: `custom-${run}@example.com`, custom_password_hash: { algorithm: "bcrypt", hash: { value: bcrypt.hashSync("Other-Pw-1", 4) } } },
      { email: `argon-${run}@example.com`, custom_password_hash: { algorithm: "argon2", hash: { value: "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$aGFzaA" } } },
      { email: "not-an-email" },
      ...Array.from({ length: 600 }, (_, i) => ({ email: `bulk-${i}-${run}@example.com`, given_name: `Bulk ${i}` })),
    ];
    const job = await admin.jobs.usersImports.create({
      users: new File([JSON.stringify(rows)], "users.json", { type: "application/json" }),
      connection_id: String(connection?.id),
      external_id: `e2e-${run}`,
      send_completion_email: false,
    });
    expect(job).toMatchObject({ status: "pending", type: "users_import", connection_id: connection?.id, external_id: `e2e-${run}` });
    expect(job.id).toMatch(/^job_/);

    const done = await settled(job.id);
    expect(done).toMatchObject({ status: "completed", percentage_done: 100, summary: { inserted: 602, updated: 0, failed: 2, total: 604 } });

    const errors = (await admin.jobs.errors.get(job.id)) as Array<{ user: Record<string, unknown>; errors: Array<{ code: string }> }>;
    expect(errors.map((e) => [e.user.email, e.errors[0]?.code])).toEqual([
      [`argon-${run}@example.com`, "UNSUPPORTED_HASH_ALGORITHM"],
      ["not-an-email", "INVALID_FORMAT"],
    ]);
    expect(JSON.stringify(errors)).not.toContain("argon2id");

    const [user] = await admin.users.listUsersByEmail({ email: imported.email });
    expect(user).toMatchObject({ user_id: `auth0|legacy-${run}`, email_verified: true, name: "Imported Person" });
    userId = String(user?.user_id);
  });

  it("the imported bcrypt user logs in through the login page with their original password", async () => {
    const { page } = await context("imported-login");
    const callback = callbacks.next("/callback");
    await page.goto(authorizeUrl());
    await page.getByLabel("Email address").fill(imported.email);
    await page.getByLabel("Password", { exact: true }).fill(imported.password);
    await page.getByRole("button", { name: "Continue" }).click();
    const url = await callback;
    await screenshot(page, "jobs-01-imported-user-logged-in.png");
    const res = await exchange(url);
    expect(res.status).toBe(200);
    expect(decodeJwt(((await res.json()) as { id_token: string }).id_token)).toMatchObject({ sub: userId, email: imported.email });
  });

  it("jobs.usersExports.create produces a signed location serving gzipped JSON lines", async () => {
    const job = await admin.jobs.usersExports.create({ format: "json", fields: [{ name: "user_id" }, { name: "email" }] });
    expect(job).toMatchObject({ status: "pending", type: "users_export", format: "json" });
    const done = await settled(job.id);
    expect(done.status).toBe("completed");
    const res = await fetch(String(done.location));
    expect(res.status).toBe(200);
    const lines = gunzipSync(Buffer.from(await res.arrayBuffer())).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { user_id: string; email: string });
    expect(lines).toContainEqual({ user_id: userId, email: imported.email });
    expect(lines.filter((l) => l.email.startsWith("bulk-") && l.email.endsWith(`-${run}@example.com`))).toHaveLength(600);
    const tampered = new URL(String(done.location));
    tampered.searchParams.set("signature", "AAAA");
    expect((await fetch(tampered)).status).toBe(403);
  });

  /** The development sink's messages to an address, polled until `count` arrived (the relay sends job emails). */
  async function sink(to: string, count = 1): Promise<Array<{ subject: string; text: string }>> {
    for (let i = 0; i < 80; i++) {
      const { messages } = (await (await fetch(`${server.baseUrl}/__dev/messages?to=${encodeURIComponent(to)}`)).json()) as { messages: Array<{ subject: string; text: string }> };
      if (messages.length >= count) return messages;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`no message to ${to}`);
  }

  it("a finished import emails the tenant's support_email; an imported TOTP factor is an enrolled authenticator", async () => {
    const support = `ops-${run}@example.com`;
    await admin.tenants.settings.update({ support_email: support });
    const connection = (await admin.connections.list({ name: DB })).data[0];
    const email = `totp-${run}@example.com`;
    const job = await admin.jobs.usersImports.create({
      users: new File([JSON.stringify([{ email, mfa_factors: [{ totp: { secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" } }] }])], "users.json", { type: "application/json" }),
      connection_id: String(connection?.id),
    });
    expect(job).toMatchObject({ send_completion_email: true });
    expect((await settled(job.id)).status).toBe("completed");
    const [mail] = await sink(support);
    expect(mail?.subject).toBe(`Users import ${job.id} has completed`);
    expect(mail?.text).toContain("inserted 1, updated 0, failed 0");
    const [user] = await admin.users.listUsersByEmail({ email });
    const methods = (await admin.users.authenticationMethods.list(String(user?.user_id))).data;
    expect(methods.map((m) => [m.type, m.confirmed])).toEqual([["totp", true]]);
  });

  it("jobs.verificationEmail.create sends a link that verifies the email in the browser, once", async () => {
    const [user] = await admin.users.listUsersByEmail({ email: `bulk-0-${run}@example.com` });
    expect(user?.email_verified).toBe(false);
    const job = await admin.jobs.verificationEmail.create({ user_id: String(user?.user_id) });
    // Pending until the relay sent the email (the reference platform answers pending too), then completed.
    expect(job).toMatchObject({ type: "verification_email", status: "pending" });
    const [mail] = await sink(String(user?.email));
    let status = "";
    for (let i = 0; i < 40 && status !== "completed"; i++) {
      status = (await admin.jobs.get(job.id)).status;
      if (status !== "completed") await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe("completed");
    const link = /https?:\/\/\S+\/u2\/email-verification\?\S+/.exec(mail?.text ?? "")?.[0] as string;
    const recorded = await context("verification-link");
    await recorded.page.goto(link);
    await expect(recorded.page.getByRole("heading", { name: "Email verified" }).isVisible()).resolves.toBe(true);
    await screenshot(recorded.page, "jobs-02-email-verified.png");
    expect((await admin.users.get(String(user?.user_id))).email_verified).toBe(true);
    expect((await fetch(link)).status).toBe(400);
  });
});
