import { ManagementClient, ManagementError } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";

/**
 * Issue 9 end to end: the reference platform's own SDK (`auth0` ManagementClient, unmodified) does CRUD on
 * users, searches with `q`, walks 1,000 users to the end (its offset paginator, and checkpoint from/take),
 * and links two users, against `wrangler dev`.
 */
describe("users through the auth0 SDK", () => {
  let server: RunningServer;
  let admin: ManagementClient;
  const DB = "Username-Password-Authentication";
  const run = Date.now().toString(36);

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    await admin.connections.create({ name: "email", strategy: "email" });
  });

  afterAll(async () => {
    await server?.stop();
  });

  const status = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return 200;
    } catch (error) {
      if (error instanceof ManagementError) return error.statusCode;
      throw error;
    }
  };

  it("creates, reads, updates (metadata merged), finds by email and deletes a user", async () => {
    const email = `crud-${run}@example.com`;
    const created = await admin.users.create({ connection: DB, email: email.toUpperCase(), password: "Sufficient-Pw-1", given_name: "Grace", user_metadata: { lang: "en", theme: "dark" } });
    expect(created).toMatchObject({ email, given_name: "Grace", email_verified: false });
    const id = created.user_id as string;
    expect(created.identities?.[0]).toMatchObject({ connection: DB, provider: "auth0", user_id: id.slice("auth0|".length), isSocial: false });
    expect(await admin.users.get(id)).toMatchObject({ user_id: id, email });
    const updated = await admin.users.update(id, { user_metadata: { theme: null as unknown as string, tz: "UTC" }, app_metadata: { plan: "pro" }, family_name: "Hopper" });
    expect(updated).toMatchObject({ user_metadata: { lang: "en", tz: "UTC" }, app_metadata: { plan: "pro" }, family_name: "Hopper" });
    expect(updated.user_metadata).not.toHaveProperty("theme");
    const byEmail = await admin.users.listUsersByEmail({ email: ` ${email.toUpperCase()}` });
    expect(byEmail.map((u) => u.user_id)).toEqual([id]);
    expect(await status(admin.users.create({ connection: DB, email, password: "Sufficient-Pw-1" }))).toBe(409);
    expect(await status(admin.users.create({ connection: "no-such-connection", email: `x-${run}@example.com` }))).toBe(400);
    await admin.users.delete(id);
    expect(await status(admin.users.get(id))).toBe(404);
  });

  it("creates 1,000 users (100 by concurrent SDK calls, 900 by one import job), then walks them all with the SDK's paginator and with checkpoint from/take", async () => {
    const total = 1000;
    const byCalls = 100;
    let next = 0;
    const worker = async () => {
      while (next < byCalls) {
        const i = next++;
        await admin.users.create({ connection: "email", email: `walk-${i}-${run}@example.com`, app_metadata: { batch: run, n: i } });
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    // The rest in one bulk import (a thousand single creations would spend the client's management rate limit).
    const connection = (await admin.connections.list({ name: DB })).data[0];
    const rows = Array.from({ length: total - byCalls }, (_, k) => ({ email: `walk-${byCalls + k}-${run}@example.com`, app_metadata: { batch: run, n: byCalls + k } }));
    const job = await admin.jobs.usersImports.create({
      users: new File([JSON.stringify(rows)], "users.json", { type: "application/json" }),
      connection_id: String(connection?.id),
      send_completion_email: false,
    });
    let status = job.status;
    for (let i = 0; i < 240 && status !== "completed" && status !== "failed"; i++) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await admin.jobs.get(job.id)).status;
    }
    expect(status).toBe("completed");

    // The SDK's own offset paginator over a search: every page until a short one.
    const searched: string[] = [];
    for await (const user of await admin.users.list({ q: `app_metadata.batch:${run}`, search_engine: "v3", per_page: 100 })) {
      searched.push(user.email as string);
    }
    expect(searched).toHaveLength(total);
    expect(new Set(searched).size).toBe(total);

    // Checkpoint mode through the same SDK call: from/take switch the request (SPEC §4.3 rule 1).
    const walked: string[] = [];
    let from: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const page = await admin.users.list({}, { queryParams: { take: 100, ...(from ? { from } : {}) } });
      const body = page.response as unknown as { users: Array<{ email: string; created_at: string }>; next?: string };
      walked.push(...body.users.map((u) => u.email));
      if (!body.next) break;
      from = body.next;
    }
    const mine = walked.filter((e) => e.endsWith(`-${run}@example.com`) && e.startsWith("walk-"));
    expect(mine).toHaveLength(total);
    expect(new Set(walked).size).toBe(walked.length);
  }, 300_000);

  it("searches with q: a complete email is equality, a partial term a substring, field:value and ranges", async () => {
    const exact = await admin.users.list({ q: `walk-7-${run}@example.com`, search_engine: "v3" });
    expect(exact.data.map((u) => u.email)).toEqual([`walk-7-${run}@example.com`]);
    const partial = await admin.users.list({ q: `lk-99-${run}`, search_engine: "v3", per_page: 50 });
    expect(partial.data.map((u) => u.email).sort()).toEqual([`walk-99-${run}@example.com`]);
    const field = await admin.users.list({ q: `app_metadata.batch:${run} AND (app_metadata.n:10 OR app_metadata.n:11)`, search_engine: "v3" });
    expect(field.data.map((u) => u.email).sort()).toEqual([`walk-10-${run}@example.com`, `walk-11-${run}@example.com`]);
    expect(await status(admin.users.list({ q: "shoe_size:42" }))).toBe(400);
    expect(await status(admin.users.list({ q: "email:x", sort: "email:1" }))).toBe(400);
  });

  it("links two users and unlinks them", async () => {
    const primary = await admin.users.create({ connection: DB, email: `primary-${run}@example.com`, password: "Sufficient-Pw-1" });
    const secondary = await admin.users.create({ connection: "email", email: `secondary-${run}@example.com` });
    const bare = (secondary.user_id as string).slice("email|".length);
    const identities = await admin.users.identities.link(primary.user_id as string, { provider: "email", user_id: bare });
    expect(identities.map((i) => [i.provider, i.user_id])).toEqual([
      ["auth0", (primary.user_id as string).slice("auth0|".length)],
      ["email", bare],
    ]);
    expect(identities[1]?.profileData).toMatchObject({ email: `secondary-${run}@example.com` });
    expect((await admin.users.get(primary.user_id as string)).identities).toHaveLength(2);
    expect(await status(admin.users.get(secondary.user_id as string))).toBe(404);
    const remaining = await admin.users.identities.delete(primary.user_id as string, "email", bare);
    expect(remaining.map((i) => i.provider)).toEqual(["auth0"]);
    expect(await admin.users.get(secondary.user_id as string)).toMatchObject({ email: `secondary-${run}@example.com` });
  });

  it("lists a brute-force lock with userBlocks.list and listByIdentifier, and lifts it with userBlocks.delete", async () => {
    const origin = "https://blocks.example.com";
    const app = await admin.clients.create({ name: `blocks-${run}`, app_type: "spa", web_origins: [origin], callbacks: [`${origin}/cb`] });
    const email = `locked-${run}@example.com`;
    const user = await admin.users.create({ connection: DB, email, password: "Sufficient-Pw-1" });
    const id = user.user_id as string;
    const attempt = (password: string) =>
      fetch(`${server.baseUrl}/co/authenticate`, {
        method: "POST",
        headers: { "content-type": "application/json", origin },
        body: JSON.stringify({ client_id: app.client_id, username: email, password, credential_type: "password" }),
      });
    expect((await admin.userBlocks.list(id)).blocked_for).toEqual([]);
    for (let i = 0; i < 3; i++) expect((await attempt("Wrong-Guess-1")).status).toBe(403);
    expect((await attempt("Sufficient-Pw-1")).status).toBe(403);
    const blocks = await admin.userBlocks.list(id);
    expect(blocks.blocked_for).toEqual([expect.objectContaining({ identifier: email, connection: DB })]);
    expect((await admin.userBlocks.listByIdentifier({ identifier: email })).blocked_for).toHaveLength(1);
    await admin.userBlocks.delete(id);
    expect((await admin.userBlocks.listByIdentifier({ identifier: email })).blocked_for).toEqual([]);
    expect((await attempt("Sufficient-Pw-1")).status).toBe(200);
  });
});
