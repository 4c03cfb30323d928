import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { JOB_RETENTION_MS } from "../../src/objects/tenant/jobs/jobs";
import { PURGE_BATCH_ROWS } from "../../src/objects/tenant/jobs/job-retention";
import { createTenant } from "../helpers/api";
import { dbConnectionId, drain, postImport, runAlarm } from "../helpers/jobs";
import { injectClock, tenantSql } from "../helpers/outbox";
import { api } from "../helpers/users";

/**
 * Issue 14 point 5: finished jobs expire JOB_RETENTION_MS (24 hours, as the reference platform deletes job
 * data) after they finished; reads answer 404 from then on, and the tenant object's alarm removes the job,
 * its row errors and its export lines in bounded batches.
 */

const count = async (tenant: string, table: string, jobId: string) =>
  (await tenantSql<{ n: number }>(tenant, `SELECT count(*) AS n FROM ${table} WHERE ${table === "jobs" ? "id" : "job_id"} = ?`, jobId))[0]?.n ?? 0;

describe("retention of finished jobs", () => {
  it("a finished import is readable for 24 hours, then 404 on both reads, and the alarm removes it with its errors", async () => {
    const tenant = await createTenant();
    const clock = await injectClock(tenant);
    const res = await postImport(tenant, { connection_id: await dbConnectionId(tenant), send_completion_email: "false" }, [{ email: "kept@example.com" }, { name: "no email" }]);
    const { id } = (await res.json()) as { id: string };
    const job = await drain(tenant, id);
    expect(job.status).toBe("completed");
    const finishedAt = clock.now;

    clock.now = finishedAt + JOB_RETENTION_MS - 1_000;
    expect((await api(tenant, "GET", `/jobs/${id}`)).status).toBe(200);
    expect((await api(tenant, "GET", `/jobs/${id}/errors`)).status).toBe(200);

    clock.now = finishedAt + JOB_RETENTION_MS + 1;
    // Expired: gone for every read at once, before the alarm has removed anything.
    expect(await count(tenant, "jobs", id)).toBe(1);
    for (const path of [`/jobs/${id}`, `/jobs/${id}/errors`]) {
      const gone = await api(tenant, "GET", path);
      expect(gone.status).toBe(404);
      expect(((await gone.json()) as { errorCode: string }).errorCode).toBe("inexistent_job");
    }
    await runAlarm(tenant);
    expect(await count(tenant, "jobs", id)).toBe(0);
    expect(await count(tenant, "job_rows", id)).toBe(0);
    expect(await count(tenant, "job_errors", id)).toBe(0);
    // The imported user is not a job's data: it stays.
    const users = (await (await api(tenant, "GET", "/users-by-email?email=kept%40example.com")).json()) as unknown[];
    expect(users).toHaveLength(1);
  });

  it("a large expired job is removed in bounded batches, one commit of at most PURGE_BATCH_ROWS rows per alarm", async () => {
    const tenant = await createTenant();
    const clock = await injectClock(tenant);
    // 2,500 rows that all fail: 2,500 staged rows and 2,500 row errors, 5,000 rows to remove.
    const rows = Array.from({ length: 2_500 }, (_, i) => ({ name: `row ${i}` }));
    const { id } = (await (await postImport(tenant, { connection_id: await dbConnectionId(tenant), send_completion_email: "false" }, rows)).json()) as { id: string };
    expect((await drain(tenant, id)).status).toBe("completed");
    clock.now += JOB_RETENTION_MS + 1;
    const left = async () => (await count(tenant, "job_rows", id)) + (await count(tenant, "job_errors", id));
    expect(await left()).toBe(5_000);
    await runAlarm(tenant);
    expect(await left()).toBe(5_000 - PURGE_BATCH_ROWS);
    expect(await count(tenant, "jobs", id)).toBe(1);
    await runAlarm(tenant);
    expect(await left()).toBe(5_000 - 2 * PURGE_BATCH_ROWS);
    await runAlarm(tenant);
    expect(await left()).toBe(0);
    expect(await count(tenant, "jobs", id)).toBe(0);
  });

  it("an expired export's file is removed too: its job is 404 and its signed link no longer opens", async () => {
    const tenant = await createTenant();
    const clock = await injectClock(tenant);
    await api(tenant, "POST", "/users", { connection: "Username-Password-Authentication", email: "exported@example.com", password: "Sufficient-Pw-1" });
    const created = (await (await api(tenant, "POST", "/jobs/users-exports", { format: "json" })).json()) as { id: string };
    const job = await drain(tenant, created.id);
    expect(job.status).toBe("completed");
    const location = String(job.location);
    expect((await SELF.fetch(location)).status).toBe(200);
    expect(await count(tenant, "job_rows", created.id)).toBeGreaterThan(0);

    clock.now += JOB_RETENTION_MS + 1;
    expect((await api(tenant, "GET", `/jobs/${created.id}`)).status).toBe(404);
    expect((await SELF.fetch(location)).status).toBe(403);
    await runAlarm(tenant);
    expect(await count(tenant, "job_rows", created.id)).toBe(0);
    expect(await count(tenant, "jobs", created.id)).toBe(0);
  });

  it("an active job is never removed, however old", async () => {
    const tenant = await createTenant();
    const clock = await injectClock(tenant);
    const { id } = (await (await postImport(tenant, { connection_id: await dbConnectionId(tenant), send_completion_email: "false" }, [{ email: "late@example.com" }])).json()) as { id: string };
    clock.now += 3 * JOB_RETENTION_MS;
    expect((await api(tenant, "GET", `/jobs/${id}`)).status).toBe(200);
    expect((await drain(tenant, id)).status).toBe("completed");
  });
});
