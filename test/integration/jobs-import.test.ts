import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import bcrypt from "bcryptjs";
import { beforeAll, describe, expect, it } from "vitest";
import { JobLane } from "../../src/objects/tenant/jobs/job-lane";
import { JOB_RETENTION_MS } from "../../src/objects/tenant/jobs/jobs";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { Sql } from "../../src/objects/sql";
import { BASE, createTenant } from "../helpers/api";
import { pendingLogin, seedClient, type TestClient } from "../helpers/flows";
import { dbConnectionId, drain, postImport } from "../helpers/jobs";
import { injectClock } from "../helpers/outbox";
import { api, createConnection, DB } from "../helpers/users";

/** Issue 14 point 5: bulk user import jobs, their progress, their per-row errors and bcrypt logins. */

const CALLBACK = "https://app.example.com/callback";

const cheapHash = (password: string) => bcrypt.hashSync(password, 4);

describe("POST /jobs/users-imports and the job it starts", () => {
  let tenant: string;
  let connectionId: string;
  let client: TestClient;

  beforeAll(async () => {
    tenant = await createTenant();
    connectionId = await dbConnectionId(tenant);
    client = await seedClient(tenant, { callbacks: [CALLBACK] });
    await api(tenant, "POST", "/users", { connection: DB, email: "already@example.com", password: "Sufficient-Pw-1", name: "Before" });
  });

  it("answers 201 with a pending users_import job, then imports valid rows and reports every invalid one", async () => {
    const file = [
      { email: "Bcrypt.User@Example.com", email_verified: true, name: "Bcrypt User", given_name: "Bea", user_metadata: { plan: "gold" }, password_hash: cheapHash("Imported-Pw-1") },
      { email: "custom@example.com", user_id: "legacy-42", custom_password_hash: { algorithm: "bcrypt", hash: { value: cheapHash("Custom-Pw-1"), encoding: "utf8" } } },
      { email: "md5@example.com", custom_password_hash: { algorithm: "md5", hash: { value: "5f4dcc3b5aa765d61d8327deb882cf99", encoding: "hex" } } },
      { email: "sha@example.com", password_hash: "$sha256$abc" },
      { name: "no email here" },
      { email: "already@example.com", name: "Duplicate" },
      { email: "typed@example.com", email_verified: "yes" },
      "not an object",
      { email: "extra@example.com", favourite_colour: "blue" },
      { email: "plain@example.com" },
    ];
    const res = await postImport(tenant, { connection_id: connectionId, external_id: "batch-1" }, file);
    expect(res.status, await res.clone().text()).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toMatchObject({ status: "pending", type: "users_import", connection_id: connectionId, external_id: "batch-1", connection: DB });
    expect(created.id).toMatch(/^job_[A-Za-z0-9]{16}$/);
    expect(Number.isNaN(Date.parse(String(created.created_at)))).toBe(false);

    const done = await drain(tenant, String(created.id));
    expect(done).toMatchObject({ status: "completed", percentage_done: 100, summary: { inserted: 3, updated: 0, failed: 7, total: 10 } });

    const errors = (await (await api(tenant, "GET", `/jobs/${created.id}/errors`)).json()) as Array<{ user: Record<string, unknown>; errors: Array<{ code: string; path?: string }> }>;
    const byEmail = new Map(errors.map((e) => [String(e.user.email ?? e.user.name ?? e.user.value), e.errors]));
    expect(byEmail.get("md5@example.com")?.[0]).toMatchObject({ code: "UNSUPPORTED_HASH_ALGORITHM", path: "#/custom_password_hash/algorithm" });
    expect(byEmail.get("sha@example.com")?.[0]).toMatchObject({ code: "UNSUPPORTED_HASH_ALGORITHM", path: "#/password_hash" });
    expect(byEmail.get("no email here")?.[0]).toMatchObject({ code: "OBJECT_MISSING_REQUIRED_PROPERTY" });
    expect(byEmail.get("already@example.com")?.[0]).toMatchObject({ code: "DUPLICATED_USER" });
    expect(byEmail.get("typed@example.com")?.[0]).toMatchObject({ code: "INVALID_TYPE", path: "#/email_verified" });
    expect(byEmail.get("not an object")?.[0]).toMatchObject({ code: "INVALID_TYPE" });
    expect(byEmail.get("extra@example.com")?.[0]).toMatchObject({ code: "OBJECT_ADDITIONAL_PROPERTIES" });
    // The errors endpoint never shows a password hash.
    expect(JSON.stringify(errors)).not.toMatch(/5f4dcc3b|\$2[aby]\$|\$sha256\$|custom_password_hash"/);

    const bcryptUser = (await (await api(tenant, "GET", `/users-by-email?email=bcrypt.user%40example.com`)).json()) as Array<Record<string, unknown>>;
    expect(bcryptUser[0]).toMatchObject({ email: "bcrypt.user@example.com", email_verified: true, name: "Bcrypt User", user_metadata: { plan: "gold" } });
    expect(bcryptUser[0]?.identities).toEqual([expect.objectContaining({ connection: DB, provider: "auth0", isSocial: false })]);
    const custom = (await (await api(tenant, "GET", `/users/${encodeURIComponent("auth0|legacy-42")}`)).json()) as Record<string, unknown>;
    // Imported emails stay unverified unless the row says otherwise (the reference platform's rule).
    expect(custom).toMatchObject({ user_id: "auth0|legacy-42", email: "custom@example.com", email_verified: false });
    // The search index follows (triggers): the imported user is found by name.
    const found = (await (await api(tenant, "GET", `/users?q=${encodeURIComponent('name:"Bcrypt User"')}&search_engine=v3`)).json()) as Array<{ email: string }>;
    expect(found.map((u) => u.email)).toEqual(["bcrypt.user@example.com"]);
    // The existing user was left alone (no upsert).
    const before = (await (await api(tenant, "GET", "/users-by-email?email=already%40example.com")).json()) as Array<{ name: string }>;
    expect(before[0]?.name).toBe("Before");
  });

  it("an imported bcrypt user logs in through the login page with the original password", async () => {
    const login = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
    const submit = (password: string, email = "bcrypt.user@example.com") =>
      SELF.fetch(`${BASE}/u2/login?state=${login.state}`, {
        method: "POST",
        redirect: "manual",
        headers: { host: `${tenant}.localhost:8787`, "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
        body: new URLSearchParams({ _csrf: login.csrf, email, password }).toString(),
      });
    const wrong = await submit("Not-The-Pw-1");
    expect(wrong.status).not.toBe(302);
    const res = await submit("Imported-Pw-1");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/callback\?(.+&)?code=/);
    // custom_password_hash (algorithm bcrypt) verifies as well.
    const second = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
    const custom = await SELF.fetch(`${BASE}/u2/login?state=${second.state}`, {
      method: "POST",
      redirect: "manual",
      headers: { host: `${tenant}.localhost:8787`, "content-type": "application/x-www-form-urlencoded", cookie: second.cookie },
      body: new URLSearchParams({ _csrf: second.csrf, email: "custom@example.com", password: "Custom-Pw-1" }).toString(),
    });
    expect(custom.status).toBe(302);
  });

  it("with upsert, an existing user is updated (counted as updated), its hash replaced", async () => {
    const res = await postImport(tenant, { connection_id: connectionId, upsert: "true" }, [
      { email: "already@example.com", name: "After", email_verified: true, app_metadata: { tier: 2 }, password_hash: cheapHash("Upserted-Pw-1") },
    ]);
    expect(res.status).toBe(201);
    const job = await drain(tenant, String(((await res.json()) as { id: string }).id));
    expect(job).toMatchObject({ status: "completed", upsert: true, summary: { inserted: 0, updated: 1, failed: 0, total: 1 } });
    const users = (await (await api(tenant, "GET", "/users-by-email?email=already%40example.com")).json()) as Array<Record<string, unknown>>;
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ name: "After", email_verified: true, app_metadata: { tier: 2 } });
    expect((await (await api(tenant, "GET", `/jobs/${job.id}/errors`)).status)).toBe(204);
  });

  it("rows follow the connection's username rule, as POST /users does", async () => {
    const withUsernames = await createConnection(tenant, `usernames-${crypto.randomUUID().slice(0, 6)}`, "auth0", { requires_username: true });
    const named = await postImport(tenant, { connection_id: withUsernames }, [{ email: "named@example.com", username: "named_one" }, { email: "unnamed@example.com" }]);
    const namedJob = await drain(tenant, String(((await named.json()) as { id: string }).id));
    expect(namedJob).toMatchObject({ status: "completed", summary: { inserted: 1, failed: 1 } });
    const namedErrors = (await (await api(tenant, "GET", `/jobs/${namedJob.id}/errors`)).json()) as Array<{ user: { email: string }; errors: Array<{ code: string; message: string }> }>;
    expect(namedErrors).toEqual([{ user: { email: "unnamed@example.com" }, errors: [expect.objectContaining({ code: "OBJECT_MISSING_REQUIRED_PROPERTY", message: "Missing required property: username" })] }]);
    const plain = await postImport(tenant, { connection_id: connectionId }, [{ email: "with-username@example.com", username: "not_here" }]);
    const plainJob = await drain(tenant, String(((await plain.json()) as { id: string }).id));
    expect(plainJob).toMatchObject({ summary: { inserted: 0, failed: 1 } });
    const plainErrors = (await (await api(tenant, "GET", `/jobs/${plainJob.id}/errors`)).json()) as Array<{ errors: Array<{ code: string; path: string }> }>;
    expect(plainErrors[0]?.errors[0]).toMatchObject({ code: "INVALID_FORMAT", path: "#/username" });
  });

  it("several jobs run at once and each completes", async () => {
    const ids: string[] = [];
    for (const batch of ["a", "b", "c"]) {
      const rows = Array.from({ length: 3 }, (_, i) => ({ email: `multi-${batch}-${i}@example.com` }));
      const res = await postImport(tenant, { connection_id: connectionId }, rows);
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    for (const id of ids) expect(await drain(tenant, id)).toMatchObject({ status: "completed", summary: { inserted: 3, failed: 0 } });
  });

  it("an unknown job is 404 inexistent_job on both reads", async () => {
    for (const path of ["/jobs/job_0000000000000000", "/jobs/job_0000000000000000/errors"]) {
      const res = await api(tenant, "GET", path);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { errorCode: string }).errorCode).toBe("inexistent_job");
    }
  });
});

describe("chunks commit their outcomes before advancing; a crash loses at most the chunk in flight", () => {
  const ROWS = 600; // three chunks of 250, 250 and 100

  async function staged(): Promise<{ tenant: string; id: string }> {
    const tenant = await createTenant();
    // The object's clock a day ahead: the alarms it sets never fire by themselves; the test drives each run.
    await injectClock(tenant);
    const rows = Array.from({ length: ROWS }, (_, i) => (i % 100 === 7 ? { email: `bad-${i}` } : { email: `crash-${i}@example.com`, name: `Crash ${i}` }));
    const res = await postImport(tenant, { connection_id: await dbConnectionId(tenant) }, rows);
    expect(res.status).toBe(201);
    return { tenant, id: ((await res.json()) as { id: string }).id };
  }

  /** Runs one chunk of the lane with a commit that rolls back the chunk (a crash before it committed). */
  const crashOneChunk = (tenant: string) =>
    runInDurableObject(env.TENANT.getByName(tenant), (o: TenantObject, state) => {
      let calls = 0;
      const lane = new JobLane(new Sql(state.storage.sql), state.storage, (fn) =>
        state.storage.transactionSync(() => {
          const out = fn({ sql: new Sql(state.storage.sql), now: o.outbox.now(), emit: () => {} });
          if (++calls === 2) throw new Error("simulated crash mid-chunk");
          return out;
        }),
      );
      expect(() => lane.run(o.outbox.now())).toThrow("simulated crash");
    });

  const count = (tenant: string) =>
    runInDurableObject(env.TENANT.getByName(tenant), (_o: TenantObject, state) => ({
      users: Number(state.storage.sql.exec("SELECT count(*) AS n FROM users WHERE email LIKE 'crash-%'").one().n),
      distinct: Number(state.storage.sql.exec("SELECT count(DISTINCT email) AS n FROM users WHERE email LIKE 'crash-%'").one().n),
      errors: Number(state.storage.sql.exec("SELECT count(*) AS n FROM job_errors").one().n),
    }));

  it("all rows are staged before the answer; one chunk then commits 250 rows, a crashed chunk commits nothing, and the next run resumes exactly once", async () => {
    const { tenant, id } = await staged();
    const stagedRows = await runInDurableObject(env.TENANT.getByName(tenant), (_o: TenantObject, state) => Number(state.storage.sql.exec("SELECT count(*) AS n FROM job_rows WHERE job_id = ?", id).one().n));
    expect(stagedRows).toBe(ROWS);

    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
    const afterOne = (await (await api(tenant, "GET", `/jobs/${id}`)).json()) as { status: string; percentage_done: number; summary: Record<string, number> };
    expect(afterOne).toMatchObject({ status: "processing", percentage_done: 41, summary: { inserted: 247, failed: 3, total: ROWS } });

    await crashOneChunk(tenant);
    expect(await count(tenant)).toEqual({ users: 247, distinct: 247, errors: 3 });
    const afterCrash = (await (await api(tenant, "GET", `/jobs/${id}`)).json()) as { summary: Record<string, number> };
    expect(afterCrash.summary).toMatchObject({ inserted: 247, failed: 3 });

    const done = await drain(tenant, id);
    expect(done).toMatchObject({ status: "completed", summary: { inserted: 594, updated: 0, failed: 6, total: ROWS } });
    expect(await count(tenant)).toEqual({ users: 594, distinct: 594, errors: 6 });
    // Re-running the alarm after completion changes nothing (exactly once).
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
    expect(await count(tenant)).toEqual({ users: 594, distinct: 594, errors: 6 });
  });

  it("a chunk that never commits halts its job as failed with a warning, and the lane rests until the job expires", async () => {
    const { tenant, id } = await staged();
    for (let i = 0; i < 3; i++) await crashOneChunk(tenant);
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
    const job = (await (await api(tenant, "GET", `/jobs/${id}`)).json()) as { status: string; status_details: string; summary: Record<string, number> };
    expect(job.status).toBe("failed");
    expect(job.status_details).toMatch(/made no progress after 3 attempts/);
    expect(job.summary.inserted).toBe(0);
    const errors = await api(tenant, "GET", `/jobs/${id}/errors`);
    expect(errors.status).toBe(200);
    expect(await errors.json()).toMatchObject({ id, status: "failed", status_details: expect.stringContaining("no progress") });
    // The warning is in the tenant's logs once the relay has run.
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
    const logs = (await (await api(tenant, "GET", "/logs?q=type:w")).json()) as Array<{ type: string; description: string }>;
    expect(logs.some((l) => l.type === "w" && l.description.includes(`Job ${id} halted`))).toBe(true);
    // The halted job no longer keeps the lane due: its next work is removing the job when it expires.
    const { pending, now, finished } = await runInDurableObject(env.TENANT.getByName(tenant), (o: TenantObject, state) => ({
      pending: o.jobLane.dueAt(o.outbox.now()),
      now: o.outbox.now(),
      finished: state.storage.sql.exec("SELECT completed_at FROM jobs WHERE id = ?", id).one().completed_at as number,
    }));
    expect(pending).toBe(finished + JOB_RETENTION_MS);
    expect(pending as number).toBeGreaterThan(now + JOB_RETENTION_MS - 60_000);
  });
});

describe("bad import requests are a clear 4xx and stage nothing", () => {
  let tenant: string;
  let connectionId: string;
  let emailConnectionId: string;

  beforeAll(async () => {
    tenant = await createTenant();
    connectionId = await dbConnectionId(tenant);
    emailConnectionId = await createConnection(tenant, "email", "email");
  });

  const expectProblem = async (res: Response, status: number, errorCode: string, message: RegExp) => {
    const body = (await res.json()) as { statusCode: number; errorCode: string; message: string };
    expect({ status: res.status, statusCode: body.statusCode, errorCode: body.errorCode }).toEqual({ status, statusCode: status, errorCode });
    expect(body.message).toMatch(message);
  };

  it("a missing file, a file that is not JSON, or not an array", async () => {
    await expectProblem(await postImport(tenant, { connection_id: connectionId }), 400, "invalid_body", /Missing required property: users/);
    await expectProblem(await postImport(tenant, { connection_id: connectionId }, "[{ not json"), 400, "invalid_body", /not valid JSON/);
    await expectProblem(await postImport(tenant, { connection_id: connectionId }, { email: "a@example.com" }), 400, "invalid_body", /must be a JSON array/);
  });

  it("a missing, unknown or non-database connection", async () => {
    await expectProblem(await postImport(tenant, {}, []), 400, "invalid_body", /Missing required property: connection_id/);
    await expectProblem(await postImport(tenant, { connection_id: "con_doesnotexist00" }, []), 400, "inexistent_connection", /does not exist/);
    await expectProblem(await postImport(tenant, { connection_id: emailConnectionId }, []), 400, "operation_not_supported", /database connection/);
  });

  it("an empty users file is refused at once rather than making a job that fails", async () => {
    await expectProblem(await postImport(tenant, { connection_id: connectionId }, []), 400, "invalid_body", /holds no users/);
    const jobs = await runInDurableObject(env.TENANT.getByName(tenant), (_o: TenantObject, state) => Number(state.storage.sql.exec("SELECT count(*) AS n FROM jobs").one().n));
    expect(jobs).toBe(0);
  });

  it("a 500 KB file of small valid rows is accepted however many rows it holds (over 10,000)", async () => {
    const rows = Array.from({ length: 14_000 }, (_, i) => ({ email: `s${i}@ex.co` }));
    const file = JSON.stringify(rows);
    expect(file.length).toBeLessThan(500 * 1024);
    // A tenant of its own: the other tests here count this tenant's jobs.
    const own = await createTenant();
    const res = await postImport(own, { connection_id: await dbConnectionId(own) }, file);
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { status: string }).status).toBe("pending");
    const rowsOver = JSON.stringify(Array.from({ length: 50_001 }, () => ({})));
    expect(rowsOver.length).toBeLessThan(500 * 1024);
    await expectProblem(await postImport(tenant, { connection_id: connectionId }, rowsOver), 400, "invalid_body", /more than 50000 users/);
  });

  it("a bad flag, a JSON body instead of a form, and a file over 500 KB (413)", async () => {
    await expectProblem(await postImport(tenant, { connection_id: connectionId, upsert: "maybe" }, []), 400, "invalid_body", /upsert must be true or false/);
    await expectProblem(await api(tenant, "POST", "/jobs/users-imports", { users: [], connection_id: connectionId }), 415, "unsupported_media_type", /multipart/);
    const big = JSON.stringify(Array.from({ length: 6000 }, (_, i) => ({ email: `big-${i}@example.com`, name: "x".repeat(80) })));
    expect(big.length).toBeGreaterThan(500 * 1024);
    await expectProblem(await postImport(tenant, { connection_id: connectionId }, big), 413, "payload_too_large", /exceeds 512000 bytes/);
    const jobs = await runInDurableObject(env.TENANT.getByName(tenant), (_o: TenantObject, state) => Number(state.storage.sql.exec("SELECT count(*) AS n FROM jobs").one().n));
    expect(jobs).toBe(0);
  });
});
