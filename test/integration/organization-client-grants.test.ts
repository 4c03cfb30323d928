import { beforeAll, describe, expect, it } from "vitest";
import { mgmt, uniqueId } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 2: /organizations/{id}/client-grants and GET /client-grants/{id}/organizations, in the
 * reference shapes auth0-deploy-cli (organizations handler) and Terraform (auth0_organization_client_grant) read.
 */

const SCOPES = [
  "read:organization_client_grants",
  "create:organization_client_grants",
  "delete:organization_client_grants",
  "create:organizations",
  "delete:organizations",
  "create:client_grants",
  "read:client_grants",
  "update:client_grants",
  "delete:client_grants",
  "create:resource_servers",
];
let kit: ReachKit;
const as = (extra: { body?: unknown } = {}) => ({ token: kit.allowed, headers: { "tenant-id": kit.tenant }, ...extra });
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

beforeAll(async () => {
  kit = await reachKit(SCOPES);
});

async function setup(organizationUsage?: "allow" | "require" | "deny") {
  const identifier = `https://${uniqueId("api")}.example`;
  expect((await mgmt("POST", "/resource-servers", as({ body: { identifier, scopes: [{ value: "read:x" }] } }))).status).toBe(201);
  const client = await seedClient(kit.tenant, { grant_types: ["client_credentials"] });
  const grantBody = { client_id: client.client_id, audience: identifier, scope: ["read:x"], ...(organizationUsage ? { organization_usage: organizationUsage, allow_any_organization: false } : {}) };
  const grant = await mgmt("POST", "/client-grants", as({ body: grantBody }));
  expect(grant.status, await grant.clone().text()).toBe(201);
  const org = await mgmt("POST", "/organizations", as({ body: { name: uniqueId("org") } }));
  expect(org.status).toBe(201);
  return { grant: await json<{ id: string; client_id: string; audience: string }>(grant), org: await json<{ id: string; name: string }>(org), client, identifier };
}

describe("organization client grants", () => {
  it("a grant's organization settings are stored and shown in the reference shape", async () => {
    const { grant, client, identifier } = await setup("require");
    const read = await json(await mgmt("GET", `/client-grants/${grant.id}`, as()));
    expect(read).toEqual({ id: grant.id, client_id: client.client_id, audience: identifier, scope: ["read:x"], organization_usage: "require", allow_any_organization: false });
    const patched = await mgmt("PATCH", `/client-grants/${grant.id}`, as({ body: { organization_usage: "allow", allow_any_organization: true } }));
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ scope: ["read:x"], organization_usage: "allow", allow_any_organization: true });
    for (const body of [{}, { organization_usage: "sometimes" }, { allow_any_organization: "yes" }]) {
      expect((await mgmt("PATCH", `/client-grants/${grant.id}`, as({ body }))).status, JSON.stringify(body)).toBe(400);
    }
  });

  it("associates, lists (both ways, filtered and paged) and removes; a deleted grant leaves the organization's list", async () => {
    const { grant, org, client, identifier } = await setup("allow");
    const added = await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body: { grant_id: grant.id } }));
    expect(added.status).toBe(201);
    expect(await json(added)).toEqual({ id: grant.id, client_id: client.client_id, audience: identifier, scope: ["read:x"], organization_usage: "allow", allow_any_organization: false });
    const again = await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body: { grant_id: grant.id } }));
    expect(again.status).toBe(409);

    const list = await json<{ id: string }[]>(await mgmt("GET", `/organizations/${org.id}/client-grants`, as()));
    expect(list.map((g) => g.id)).toEqual([grant.id]);
    const totals = await json(await mgmt("GET", `/organizations/${org.id}/client-grants?include_totals=true&audience=${encodeURIComponent(identifier)}`, as()));
    expect(totals).toMatchObject({ start: 0, limit: 50, total: 1, client_grants: [{ id: grant.id }] });
    expect(await json(await mgmt("GET", `/organizations/${org.id}/client-grants?client_id=someone-else`, as()))).toEqual([]);
    expect(await json(await mgmt("GET", `/organizations/${org.id}/client-grants?grant_ids=${grant.id},cgr_other`, as()))).toHaveLength(1);

    const orgs = await json<{ organizations: { id: string; name: string }[]; next?: string }>(await mgmt("GET", `/client-grants/${grant.id}/organizations?take=10`, as()));
    expect(orgs.organizations).toEqual([expect.objectContaining({ id: org.id, name: org.name })]);
    expect(orgs.organizations[0]).not.toHaveProperty("associated_at");
    expect(orgs.next).toBeUndefined();

    expect((await mgmt("DELETE", `/organizations/${org.id}/client-grants/${grant.id}`, as())).status).toBe(204);
    expect(await json(await mgmt("GET", `/organizations/${org.id}/client-grants`, as()))).toEqual([]);
    expect((await mgmt("DELETE", `/organizations/${org.id}/client-grants/${grant.id}`, as())).status).toBe(404);

    expect((await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body: { grant_id: grant.id } }))).status).toBe(201);
    expect((await mgmt("DELETE", `/client-grants/${grant.id}`, as())).status).toBe(204);
    expect(await json(await mgmt("GET", `/organizations/${org.id}/client-grants`, as()))).toEqual([]);
  });

  it("pages a grant's organizations with from/take", async () => {
    const { grant } = await setup("allow");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const org = await json<{ id: string }>(await mgmt("POST", "/organizations", as({ body: { name: uniqueId("org") } })));
      expect((await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body: { grant_id: grant.id } }))).status).toBe(201);
      ids.push(org.id);
    }
    const seen: string[] = [];
    let page = await json<{ organizations: { id: string }[]; next?: string }>(await mgmt("GET", `/client-grants/${grant.id}/organizations?take=2`, as()));
    seen.push(...page.organizations.map((o) => o.id));
    expect(page.next).toBeDefined();
    page = await json(await mgmt("GET", `/client-grants/${grant.id}/organizations?take=2&from=${encodeURIComponent(page.next as string)}`, as()));
    seen.push(...page.organizations.map((o) => o.id));
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(3);
  });

  it("refuses a grant not meant for organizations, unknown ids and bad bodies, writing nothing", async () => {
    const { grant: denied, org } = await setup();
    const refused = await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body: { grant_id: denied.id } }));
    expect(refused.status).toBe(400);
    expect((await json<{ message: string }>(refused)).message).toContain("organization_usage");
    expect((await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body: { grant_id: "cgr_nothing" } }))).status).toBe(404);
    expect((await mgmt("POST", "/organizations/org_nothing/client-grants", as({ body: { grant_id: denied.id } }))).status).toBe(404);
    for (const body of [{}, { grant_id: "" }, { grant_id: denied.id, extra: 1 }, [denied.id]]) {
      const res = await mgmt("POST", `/organizations/${org.id}/client-grants`, as({ body }));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await json(await mgmt("GET", `/organizations/${org.id}/client-grants`, as()))).toEqual([]);
    expect((await mgmt("GET", "/organizations/org_nothing/client-grants", as())).status).toBe(404);
    expect((await mgmt("GET", "/client-grants/cgr_nothing/organizations", as())).status).toBe(404);
    expect((await mgmt("GET", `/client-grants/${denied.id}/organizations?from=garbage`, as())).status).toBe(400);
  });

  it("who can reach: no token, a token without the scope, another tenant's, an end user's and a revoked one are refused", async () => {
    await expectRefusals(kit, "GET", "/organizations/org_any/client-grants", "read:organization_client_grants");
    await expectRefusals(kit, "POST", "/organizations/org_any/client-grants", "create:organization_client_grants", { grant_id: "cgr_any" });
    await expectRefusals(kit, "DELETE", "/organizations/org_any/client-grants/cgr_any", "delete:organization_client_grants");
    await expectRefusals(kit, "GET", "/client-grants/cgr_any/organizations", "read:organization_client_grants");
  });
});
