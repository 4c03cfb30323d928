import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CustomDomainRecord } from "../../src/shared/types";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { expectReachability } from "../helpers/reach";

const on = (tenantId: string) => ({ "tenant-id": tenantId });

async function claim(tenantId: string, type = "auth0_managed_certs"): Promise<CustomDomainRecord> {
  const res = await mgmt("POST", "/custom-domains", { body: { tenant_id: tenantId, domain: `login.${uniqueId()}.example.test`, type } });
  expect(res.status).toBe(201);
  return (await res.json()) as CustomDomainRecord;
}

/** A domain row still waiting for verification (the local provider verifies at once, so it is written directly). */
async function pendingDomain(tenantId: string): Promise<CustomDomainRecord> {
  const result = await env.PLATFORM.getByName("platform")
    .domains()
    .add({ tenant_id: tenantId, domain: `pending.${uniqueId()}.example.test`, type: "auth0_managed_certs" }, {
      providerRef: `local:${crypto.randomUUID()}`,
      status: "pending_verification",
      verification: { methods: [{ name: "cname", record: "localhost" }] },
    });
  if (!result.ok) throw new Error("could not add a pending domain");
  return result.value;
}

describe("GET/PATCH /custom-domains/default (the reference platform's default domain)", () => {
  it("is the canonical domain {domain} until a verified custom domain is made the default, and back", async () => {
    const id = await createTenant();
    const get = async () => (await mgmt("GET", "/custom-domains/default", { headers: on(id) })).json();
    expect(await get()).toEqual({ domain: `${id}.localhost` });
    const first = await claim(id);
    const second = await claim(id);
    expect(first.is_default).toBe(false);
    const set = await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: second.domain.toUpperCase() } });
    expect(set.status, await set.clone().text()).toBe(200);
    expect(await set.json()).toMatchObject({ custom_domain_id: second.custom_domain_id, domain: second.domain, is_default: true, status: "ready", type: "auth0_managed_certs" });
    expect(await get()).toMatchObject({ custom_domain_id: second.custom_domain_id, is_default: true, primary: false });
    // One default at a time.
    await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: first.domain } });
    const list = (await (await mgmt("GET", "/custom-domains", { headers: on(id) })).json()) as CustomDomainRecord[];
    expect(list.filter((d) => d.is_default).map((d) => d.custom_domain_id)).toEqual([first.custom_domain_id]);
    const back = await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: `${id}.localhost` } });
    expect(await back.json()).toEqual({ domain: `${id}.localhost` });
    expect(await get()).toEqual({ domain: `${id}.localhost` });
  });

  it("refuses a domain that is not verified (400), not the tenant's (404), or a malformed body (400)", async () => {
    const id = await createTenant();
    const pending = await pendingDomain(id);
    const notVerified = await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: pending.domain } });
    expect(notVerified.status).toBe(400);
    expect(((await notVerified.json()) as { message: string }).message).toContain("not verified");
    const others = await claim(await createTenant());
    expect((await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: others.domain } })).status).toBe(404);
    expect((await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: {} })).status).toBe(400);
    expect((await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: 42 } })).status).toBe(400);
    expect((await mgmt("PATCH", "/custom-domains/default", { headers: on(id), body: { domain: "x.example.test", extra: 1 } })).status).toBe(400);
  });

  it("who can reach them", async () => {
    await expectReachability("GET", () => "/custom-domains/default", "read:custom_domains", 200);
    await expectReachability("PATCH", () => "/custom-domains/default", "update:custom_domains", 200, (t) => ({ domain: `${t}.localhost` }));
  });
});

describe("POST /custom-domains/{id}/test", () => {
  it("answers {success: true, message} for a ready domain and {success: false} for one not yet verified", async () => {
    const id = await createTenant();
    const ready = await claim(id);
    const ok = await mgmt("POST", `/custom-domains/${ready.custom_domain_id}/test`, { headers: on(id) });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { success: boolean; message: string };
    expect(body.success).toBe(true);
    expect(body.message).toContain(ready.domain);
    const pending = await pendingDomain(id);
    const refused = (await (await mgmt("POST", `/custom-domains/${pending.custom_domain_id}/test`, { headers: on(id) })).json()) as { success: boolean; message: string };
    expect(refused).toEqual({ success: false, message: "The custom domain is not verified yet (status pending_verification)" });
    expect((await mgmt("POST", "/custom-domains/cd_missing/test", { headers: on(id) })).status).toBe(404);
  });

  it("who can reach it", async () => {
    await expectReachability(
      "POST",
      async (t) => `/custom-domains/${(await claim(t)).custom_domain_id}/test`,
      "create:custom_domains",
      200,
    );
  });
});
