import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";

/**
 * Issue 28 point 7: on the control plane, `tenant-id: <a tenant with its own deployment>` used to reach an
 * empty stand-in in the shared service (GET /clients answered 200 []). It is refused, naming the copy's host
 * and the route that issues a token for it; a change of its release pin names what is true.
 */

/** Marks a registry row as a per-tenant deployment, as provisioning leaves it (no dispatch namespace offline). */
async function asWfp(id: string): Promise<void> {
  await runInDurableObject(env.PLATFORM.getByName("platform"), (_o, state) => {
    state.storage.sql.exec("UPDATE tenants SET deployment_type = 'wfp' WHERE id = ?", id);
  });
}

describe("a request addressed to a tenant that runs in its own deployment", () => {
  it("is refused with the copy's host and POST /tenants/{id}/management-token, never served by a stand-in", async () => {
    // Marked before any request names it, so no isolate cache holds it as shared.
    const id = await createTenant();
    await asWfp(id);
    for (const [method, path] of [["GET", "/clients"], ["POST", "/clients"], ["GET", "/users"]] as const) {
      const res = await mgmt(method, path, { headers: { "tenant-id": id }, ...(method === "POST" ? { body: { name: "x" } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(400);
      const body = (await res.json()) as { message: string; errorCode: string };
      expect(body.errorCode).toBe("tenant_served_elsewhere");
      expect(body.message).toContain(`${id}.`);
      expect(body.message).toContain(`POST /api/v2/tenants/${id}/management-token`);
    }
    // The registry routes that manage it from here still answer.
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(200);
  });

  it("a PATCH of its release pin says it moves only through an upgrade operation (not that it is shared)", async () => {
    const id = await createTenant();
    await asWfp(id);
    const res = await mgmt("PATCH", `/tenants/${id}`, { body: { worker_version: "r9" } });
    expect(res.status).toBe(400);
    const { message } = (await res.json()) as { message: string };
    expect(message).toBe(`Tenant "${id}" runs in its own deployment: worker_version change only through POST /api/v2/tenants/${id}/operations (kind upgrade)`);
    expect(message).not.toContain("shared");
  });
});
