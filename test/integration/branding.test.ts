import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { CP, createTenant, mgmt, token } from "../helpers/api";

const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

describe("branding API (SPEC §4.2)", () => {
  it("starts empty, stores a patch and reads it back", async () => {
    const child = await createTenant();
    const target = { headers: { "tenant-id": child } };
    const empty = await mgmt("GET", "/branding", target);
    expect(empty.status).toBe(200);
    expect(await json(empty)).toEqual({});
    const body = { logo_url: "https://cdn.example.com/logo.png", favicon_url: "http://cdn.example.com/f.ico", colors: { primary: "#0a0B0c", page_background: "#fff" } };
    const res = await mgmt("PATCH", "/branding", { body, ...target });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual(body);
    expect(await json(await mgmt("GET", "/branding", target))).toEqual(body);
    // Another tenant is unaffected.
    expect(await json(await mgmt("GET", "/branding", { headers: { "tenant-id": await createTenant() } }))).toEqual({});
  });

  it("merges colours key by key and removes values set to null", async () => {
    const target = { headers: { "tenant-id": await createTenant() } };
    await mgmt("PATCH", "/branding", { body: { logo_url: "https://a.example/l.png", colors: { primary: "#111111", page_background: "#222222" } }, ...target });
    const res = await mgmt("PATCH", "/branding", { body: { logo_url: null, colors: { primary: "#333" } }, ...target });
    expect(await json(res)).toEqual({ colors: { primary: "#333", page_background: "#222222" } });
    const cleared = await mgmt("PATCH", "/branding", { body: { colors: { primary: null, page_background: null } }, ...target });
    expect(await json(cleared)).toEqual({});
  });

  it("refuses non-web URLs, bad colours and unknown fields with 400, changing nothing", async () => {
    const target = { headers: { "tenant-id": await createTenant() } };
    for (const body of [
      { logo_url: "javascript:alert(1)" },
      { logo_url: "data:image/png;base64,AAAA" },
      { favicon_url: "not a url" },
      { colors: { primary: "red" } },
      { colors: { primary: "#12345" } },
      { colors: { accent: "#fff" } },
      { theme: "dark" },
    ]) {
      const res = await mgmt("PATCH", "/branding", { body, ...target });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await json(await mgmt("GET", "/branding", target))).toEqual({});
  });

  it("is part of the tenant configuration snapshot the login pages read", async () => {
    const child = await createTenant();
    await mgmt("PATCH", "/branding", { body: { colors: { primary: "#abcdef" } }, headers: { "tenant-id": child } });
    const config = await runInDurableObject(env.TENANT.getByName(child), (obj: TenantObject) => obj.getConfig(child));
    expect(config.branding).toEqual({ colors: { primary: "#abcdef" } });
  });

  it("needs read:branding to read and update:branding to write", async () => {
    const res = await token({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: CP.clientSecret, audience: CP.audience, scope: "read:branding" });
    const readOnly = (await json<{ access_token: string }>(res)).access_token;
    expect((await mgmt("GET", "/branding", { token: readOnly })).status).toBe(200);
    expect((await mgmt("PATCH", "/branding", { token: readOnly, body: { logo_url: "https://a.example/x.png" } })).status).toBe(403);
  });
});
