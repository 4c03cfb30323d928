import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { prepareSeed } from "../../src/worker/tenant/bootstrap";
import { CP, call, createTenant, mgmt } from "../helpers/api";

const platform = () => env.PLATFORM.getByName("platform");

describe("objects and migrations", () => {
  it("each object records its applied migrations", async () => {
    const id = await createTenant();
    for (const stub of [platform(), env.TENANT.getByName(id), env.USER.getByName(`${id}/u1`)]) {
      const rows = await runInDurableObject(stub as never, (_o, state: DurableObjectState) =>
        state.storage.sql.exec("SELECT id, name FROM _migrations ORDER BY id").toArray(),
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(rows[0]?.id).toBe(1);
    }
  });
});

describe("control-plane bootstrap (issue #2 point 4)", () => {
  it("seeds the control plane: management API, M2M client with every scope, admin user", async () => {
    await call("/.well-known/jwks.json");
    const rows = await runInDurableObject(env.TENANT.getByName(CP.tenantId), (_o, state) => ({
      apis: state.storage.sql.exec("SELECT identifier FROM resource_servers").toArray(),
      grant: state.storage.sql.exec("SELECT scope FROM client_grants WHERE client_id = ?", CP.clientId).one(),
      admins: state.storage.sql.exec("SELECT email, password_hash FROM users WHERE email = ?", "admin@example.com").toArray(),
    }));
    expect(rows.apis.map((r) => r.identifier)).toEqual(["urn:gatehouse:management"]);
    expect(JSON.parse(String(rows.grant.scope))).toContain("create:tenants");
    expect(rows.admins).toHaveLength(1);
    expect(String(rows.admins[0]?.password_hash)).toMatch(/^\$2[aby]\$10\$/);
  });

  it("the seed is idempotent: running it again creates nothing", async () => {
    const id = await createTenant();
    const stub = env.TENANT.getByName(id);
    const config = await stub.getConfig(id);
    const again = await stub.seed(await prepareSeed(env, id, config));
    expect(again.created).toEqual([]);
    const counts = await runInDurableObject(stub, (_o, state) =>
      state.storage.sql.exec("SELECT (SELECT count(*) FROM signing_keys) AS keys, (SELECT count(*) FROM resource_servers) AS apis").one(),
    );
    expect(counts).toEqual({ keys: 1, apis: 1 });
  });

  it("registers tenants in the platform registry", async () => {
    const id = await createTenant();
    expect(await platform().hasTenant(id)).toBe(true);
    expect((await platform().tenants().get(id))?.deployment_type).toBe("shared");
  });
});

describe("custom domains (SPEC §2.2, §5.5)", () => {
  // Claims, routing and the issuer on a custom domain: test/integration/custom-domains.test.ts.
  it("an unknown host is 404 Tenant not found once more than one tenant exists", async () => {
    await createTenant();
    const res = await call("/.well-known/openid-configuration", { host: "nobody.example" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error_description: string }).error_description).toBe("Tenant not found");
  });
});

describe("OpenAPI documents", () => {
  it("GET /api/v2/spec states a scope for every route and documents request bodies", async () => {
    const res = await call("/api/v2/spec");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { "x-scope": string; requestBody?: unknown }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops.length).toBeGreaterThanOrEqual(5);
    for (const op of ops) expect(op["x-scope"]).toMatch(/^(read|create|update|delete):[a-z_]+$/);
    expect(doc.paths["/tenants"]?.post?.["x-scope"]).toBe("create:tenants");
    expect(doc.paths["/tenants"]?.post?.requestBody).toBeDefined();
  });

  it("GET /.well-known/openapi.json describes the Auth API", async () => {
    const doc = (await (await call("/.well-known/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/authorize", "/oauth/token", "/oauth/revoke", "/userinfo", "/oidc/logout", "/v2/logout", "/dbconnections/signup", "/co/authenticate", "/.well-known/jwks.json"]),
    );
  });
});

describe("mgmt sanity", () => {
  it("the control plane lists itself", async () => {
    const list = (await (await mgmt("GET", "/tenants?per_page=100")).json()) as { id: string }[];
    expect(list.some((t) => t.id === CP.tenantId)).toBe(true);
  });
});
