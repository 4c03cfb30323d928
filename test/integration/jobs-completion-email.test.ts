import { beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { dbConnectionId, drain, postImport, runAlarm, sinkTo } from "../helpers/jobs";
import { injectClock } from "../helpers/outbox";
import { api } from "../helpers/users";

/**
 * Issue 14 point 5, `send_completion_email` (the reference platform's default: true): a finished import
 * emails the tenant's support_email through the deployment's email provider (the development sink here).
 */
describe("the completion email of a users import", () => {
  let tenant: string;
  let connectionId: string;
  const support = "ops@acme.example";

  beforeAll(async () => {
    tenant = await createTenant();
    connectionId = await dbConnectionId(tenant);
    expect((await api(tenant, "PATCH", "/tenants/settings", { support_email: support })).status).toBe(200);
    // The tests drive the alarm themselves: "nothing sent before the import finished" cannot race it.
    await injectClock(tenant);
  });

  it("by default, a finished import emails its outcome and counts to the tenant's support_email", async () => {
    const file = [{ email: "one@example.com" }, { email: "two@example.com" }, { name: "no email" }];
    const created = (await (await postImport(tenant, { connection_id: connectionId, external_id: "batch-mail" }, file)).json()) as { id: string };
    expect(await sinkTo(tenant, support)).toEqual([]);
    await drain(tenant, created.id);
    await runAlarm(tenant);
    const mail = (await sinkTo(tenant, support)).filter((m) => m.subject?.includes(created.id));
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ channel: "email", to: support, subject: `Users import ${created.id} has completed` });
    expect(mail[0]?.text).toContain("inserted 2, updated 0, failed 1");
    expect(mail[0]?.text).toContain("External id: batch-mail");
    expect(mail[0]?.text).toContain(`/api/v2/jobs/${created.id}/errors`);
    // The relay delivered it once: more alarms do not send it again.
    await runAlarm(tenant, 2);
    expect((await sinkTo(tenant, support)).filter((m) => m.subject?.includes(created.id))).toHaveLength(1);
  });

  it("send_completion_email=false sends nothing", async () => {
    const created = (await (await postImport(tenant, { connection_id: connectionId, send_completion_email: "false" }, [{ email: "quiet@example.com" }])).json()) as {
      id: string;
      send_completion_email: boolean;
    };
    expect(created.send_completion_email).toBe(false);
    const job = await drain(tenant, created.id);
    expect(job.status).toBe("completed");
    await runAlarm(tenant, 2);
    expect((await sinkTo(tenant, support)).filter((m) => m.subject?.includes(created.id))).toEqual([]);
  });

  it("a tenant without support_email gets no email, and a warning in its logs says why", async () => {
    const other = await createTenant();
    const created = (await (await postImport(other, { connection_id: await dbConnectionId(other) }, [{ email: "a@example.com" }])).json()) as { id: string };
    await drain(other, created.id);
    await runAlarm(other, 2);
    const logs = (await (await api(other, "GET", "/logs?per_page=100")).json()) as Array<{ type: string; description?: string }>;
    expect(logs.some((l) => l.type === "w" && l.description?.includes(`Job ${created.id}: no completion email sent`))).toBe(true);
  });
});
