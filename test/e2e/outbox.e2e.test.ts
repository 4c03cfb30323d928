import { type Management, type ManagementClient, ManagementError } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { startReceiver } from "../../scripts/webhook-receiver.mjs";
import { controlledTenant } from "./helpers/tenant-server";

/**
 * Audit logs and hooks through the reference platform's Node SDK (`auth0` 7.1.0) against a real
 * `wrangler dev`: the relay runs from the tenant object's real alarm, and webhooks reach a receiver over
 * real HTTP.
 * - `logs.list` sends `search` (our `q`), `page`, `per_page` and `include_totals=true`; checkpoint paging
 *   goes through the SDK's `queryParams` request option (`from`, `take`), the answer is `{logs, next}`.
 * - `hooks.create` requires `script` in its types; the webhook kind adds `url` (cast, the SDK sends it as is).
 */
describe("logs and hooks through the auth0 Node SDK", () => {
  let server: RunningServer;
  let tenant: Awaited<ReturnType<typeof controlledTenant>>;
  let management: ManagementClient;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    // A tenant of its own on the shared server, managed from its control plane: its logs are this file's alone.
    server = await startServer({ shareable: true });
    tenant = await controlledTenant(server, "outbox");
    management = tenant.admin;
  });

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  /** Polls until the relay has written at least `n` sapi logs (the alarm runs on its own). */
  async function sapiLogs(n: number): Promise<Management.Log[]> {
    for (let i = 0; i < 100; i++) {
      const page = await management.logs.list({ search: "type:sapi", per_page: 100 });
      if (page.data.length >= n) return page.data;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`fewer than ${n} sapi logs`);
  }

  it("walks /logs with checkpoint paging (from, take) and offset paging, and reads one log by id", async () => {
    for (let i = 0; i < 5; i++) await management.clients.create({ name: `e2e-log-${i}` });
    const all = await sapiLogs(5);
    expect(all[0]).toMatchObject({ type: "sapi", log_id: expect.any(String), date: expect.any(String) });

    const walked: string[] = [];
    let from: string | undefined;
    for (let i = 0; i < 50; i++) {
      const page = await management.logs.list({ search: "type:sapi" }, { queryParams: { take: 2, ...(from ? { from } : {}) } });
      walked.push(...page.data.map((l) => l.log_id as string));
      from = (page.response as { next?: string }).next;
      if (!from) break;
    }
    expect(walked).toEqual(all.map((l) => l.log_id));

    const offset: string[] = [];
    for await (const log of await management.logs.list({ search: "type:sapi", per_page: 2 })) offset.push(log.log_id as string);
    expect(offset).toEqual(walked);

    const one = await management.logs.get(all[0]?.log_id as string);
    expect(one).toMatchObject({ log_id: all[0]?.log_id, type: "sapi", description: "client created" });
  });

  it("manages a webhook hook whose events reach the receiver with an Idempotency-Key, and refuses an undispatchable trigger", async () => {
    const hook = await management.hooks.create({
      name: "e2e-login-hook",
      script: "module.exports = () => {}",
      triggerId: "post-user-registration",
      url: `${receiver.url}/hook/e2e`,
    } as Management.CreateHookRequestContent);
    expect(hook).toMatchObject({ name: "e2e-login-hook", triggerId: "post-user-registration", enabled: true });
    const listed = await management.hooks.list({ triggerId: "post-user-registration" });
    expect(listed.data.map((h) => h.id)).toEqual([hook.id]);

    const app = await management.clients.create({ name: "e2e-signup", app_type: "spa", token_endpoint_auth_method: "none" });
    const signup = await fetch(`${tenant.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.client_id, email: "e2e-hook@example.com", password: "e2e-password-123", connection: "Username-Password-Authentication" }),
    });
    expect(signup.status).toBe(200);
    for (let i = 0; i < 100 && !receiver.deliveries.get("e2e")?.length; i++) await new Promise((r) => setTimeout(r, 200));
    const [delivery] = receiver.deliveries.get("e2e") ?? [];
    expect(delivery?.key).toMatch(/^evt_/);
    expect(delivery?.body).toMatchObject({ id: delivery?.key, trigger_id: "post-user-registration", data: { user: { email: "e2e-hook@example.com" } } });

    const updated = await management.hooks.update(hook.id as string, { enabled: false });
    expect(updated.enabled).toBe(false);
    await management.hooks.delete(hook.id as string);
    const gone = await management.hooks.get(hook.id as string).then(() => null, (e: unknown) => e);
    expect(gone).toBeInstanceOf(ManagementError);
    expect((gone as ManagementError).statusCode).toBe(404);

    const refused = await management.hooks
      .create({ name: "bad-trigger", script: "x", triggerId: "post-user-update" as Management.HookTriggerIdEnum, url: `${receiver.url}/hook/never` } as Management.CreateHookRequestContent)
      .then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(ManagementError);
    expect((refused as ManagementError).statusCode).toBe(400);
  });
});
