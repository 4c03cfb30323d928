import { describe, expect, it, vi } from "vitest";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser, sessionCookie } from "../helpers/flows";
import { attemptedRows, createHook, fireAlarm, hookUrl, relay, tenantSql } from "../helpers/outbox";

/**
 * Issue 25 point 8: webhook, log-stream and back-channel logout URLs may not point at private, link-local,
 * metadata or reserved addresses, nor at this service, when saved (400) and when delivered (a recorded
 * failure). The tests allow loopback (ALLOW_LOOPBACK_EGRESS=1, the receiver is on 127.0.0.1); loopback with
 * the variable off is covered by test/unit/shared/egress-policy.test.ts.
 */

const REFUSED = [
  "http://169.254.169.254/latest/meta-data/",
  "http://10.0.0.1/hook",
  "http://0xa9fea9fe/", // 169.254.169.254
  "http://012.0.0.1/", // 10.0.0.1, octal
  "http://[::ffff:10.0.0.1]/",
  "http://[fd00::1]/",
  "http://[fe80::1]/",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://localhost:8787/api/v2/users", // this service (the tests' ISSUER)
  "http://acme.localhost:8787/",
];
/** Refused, and answers at once if a request were sent anyway (no 10 s timeout on the old code). */
const REFUSED_FAST = "http://0.0.0.0:9/in";

const admin = (tenantId: string, method: string, path: string, body?: unknown) =>
  mgmt(method, path, { headers: { "tenant-id": tenantId }, ...(body === undefined ? {} : { body }) });

async function expectRefused(res: Response, property: string) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ statusCode: 400, error: "Bad Request", errorCode: "invalid_body" });
  expect(String(body.message)).toMatch(new RegExp(`this service does not send requests to' on property ${property.replace(/\./g, "\\.")}$`));
}

describe("egress policy when a URL is saved", () => {
  it("POST and PATCH /hooks refuse a private, metadata or own-host url with 400 invalid_body; the loopback receiver is allowed here", async () => {
    const tenantId = await createTenant();
    for (const url of REFUSED) await expectRefused(await admin(tenantId, "POST", "/hooks", { trigger_id: "post-user-login", url }), "url");
    const hook = await createHook(tenantId, "post-user-login", hookUrl(uniqueId("ok")));
    for (const url of REFUSED) await expectRefused(await admin(tenantId, "PATCH", `/hooks/${hook.id}`, { url }), "url");
    expect(await tenantSql(tenantId, "SELECT url FROM hooks")).toEqual([{ url: hook.url }]);
  });

  it("POST and PATCH /log-streams refuse such an httpEndpoint with 400 invalid_body", async () => {
    const tenantId = await createTenant();
    for (const httpEndpoint of REFUSED) {
      await expectRefused(await admin(tenantId, "POST", "/log-streams", { type: "http", sink: { httpEndpoint } }), "sink.httpEndpoint");
    }
    const created = await admin(tenantId, "POST", "/log-streams", { type: "http", sink: { httpEndpoint: hookUrl(uniqueId("ok")) } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    for (const httpEndpoint of REFUSED) {
      await expectRefused(await admin(tenantId, "PATCH", `/log-streams/${id}`, { sink: { httpEndpoint } }), "sink.httpEndpoint");
    }
  });

  it("POST and PATCH /clients refuse such a back-channel logout URI (both spellings) with 400 invalid_body", async () => {
    const tenantId = await createTenant();
    const https = ["https://169.254.169.254/bcl", "https://10.0.0.1/bcl", "https://[fc00::1]/bcl", "https://167772161/bcl"];
    for (const url of https) {
      await expectRefused(await admin(tenantId, "POST", "/clients", { name: "rp", oidc_logout: { backchannel_logout_urls: [url] } }), "oidc_logout.backchannel_logout_urls");
    }
    const client = await seedClient(tenantId);
    for (const url of https) {
      await expectRefused(await admin(tenantId, "PATCH", `/clients/${client.client_id}`, { oidc_logout: { backchannel_logout_urls: [url] } }), "oidc_logout.backchannel_logout_urls");
      await expectRefused(
        await admin(tenantId, "PATCH", `/clients/${client.client_id}`, { oidc_backchannel_logout: { backchannel_logout_urls: [url] } }),
        "oidc_backchannel_logout.backchannel_logout_urls",
      );
    }
    expect((await admin(tenantId, "PATCH", `/clients/${client.client_id}`, { oidc_logout: { backchannel_logout_urls: [hookUrl(uniqueId("rp"))] } })).status).toBe(200);
  });
});

describe("egress policy when a request is delivered (URLs saved before the policy)", () => {
  it("a webhook whose stored url is refused is not called: the delivery fails with the policy's reason", async () => {
    const tenantId = await createTenant();
    const client = await seedClient(tenantId);
    const hook = await createHook(tenantId, "post-user-registration", hookUrl(uniqueId("before")));
    await tenantSql(tenantId, "UPDATE hooks SET url = ? WHERE id = ?", REFUSED_FAST, hook.id);
    const signup = await call("/dbconnections/signup", {
      method: "POST",
      host: `${tenantId}.localhost:8787`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, connection: "Username-Password-Authentication", email: `${uniqueId("u")}@example.com`, password: "p4ssw0rd!long" }),
    });
    expect(signup.status).toBe(200);
    await fireAlarm(tenantId);
    const [row] = await attemptedRows(tenantId, "hook.post-user-registration");
    expect(row?.processed_at).toBeNull();
    expect(row?.error).toContain(`hook ${hook.id}: Refused by the egress policy: 0.0.0.0 is a private, link-local, metadata or reserved address`);
  });

  it("a log stream whose stored endpoint is refused is suspended at once, the reason in lastError", async () => {
    const tenantId = await createTenant();
    const created = await admin(tenantId, "POST", "/log-streams", { type: "http", sink: { httpEndpoint: hookUrl(uniqueId("before")) } });
    const { id } = (await created.json()) as { id: string };
    await tenantSql(tenantId, `UPDATE log_streams SET sink = json_set(sink, '$.httpEndpoint', ?) WHERE id = ?`, REFUSED_FAST, id);
    await admin(tenantId, "PATCH", "/branding", { colors: { primary: "#123456" } });
    await relay(tenantId);
    await fireAlarm(tenantId);
    // The object's own alarm may hold the delivery while the test's pass runs: wait for its outcome.
    const stream = await vi.waitFor(
      async () => {
        await relay(tenantId);
        const read = (await (await admin(tenantId, "GET", `/log-streams/${id}`)).json()) as { status: string; lastError?: { message: string } };
        expect(read.status).toBe("suspended");
        return read;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(stream.lastError?.message).toBe("Refused by the egress policy: 0.0.0.0 is a private, link-local, metadata or reserved address, which this service does not send requests to");
  });

  it("a back-channel logout URI stored before the policy is not called: the notification fails with the policy's reason", async () => {
    const tenantId = await createTenant();
    const client = await seedClient(tenantId, { callbacks: ["https://app.example.com/callback"] });
    expect((await admin(tenantId, "PATCH", `/clients/${client.client_id}`, { oidc_logout: { backchannel_logout_urls: [hookUrl(uniqueId("bcl"))] } })).status).toBe(200);
    await tenantSql(
      tenantId,
      `UPDATE clients SET extra = json_set(extra, '$.oidc_logout.backchannel_logout_urls', json_array(?)) WHERE client_id = ?`,
      REFUSED_FAST.replace("http:", "https:"),
      client.client_id,
    );
    const user = await seedUser(tenantId, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenantId, user.user_id, client.client_id, { expiresAt: Date.now() + 86_400_000 });
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    expect((await admin(tenantId, "DELETE", `/sessions/${sessionId}`)).status).toBe(204);
    // The notification follows the session's other events through the relay: run passes until none is due.
    await relay(tenantId);
    const [row] = await attemptedRows(tenantId, "internal.backchannel_logout");
    expect(row?.processed_at).toBeNull();
    expect(row?.error).toContain("Refused by the egress policy: 0.0.0.0 is a private, link-local, metadata or reserved address");
  });
});
