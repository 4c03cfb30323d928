import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { fieldCipher } from "../../src/shared/crypto/encryption";
import { createTenant, mgmt } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { logsOf, relay, tenantSql } from "../helpers/outbox";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/** Issue 9 point 6: a user's authentication methods as data (SPEC §2.4, §4.2). */

const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const PASSKEY = {
  type: "passkey",
  credential_id: "AQIDBAUGBwgJCgsMDQ4PEA",
  public_key: "pQECAyYgASFYIBmV0Wb2vq6ghsJ0YKKqQkz2Vg8mN2Tq7z4yq8x9Hk1kIlggYFkq2Nc8Y6xVwTnYJm3n5c0p2u8dYg1Vw7Kq4sQ9c3o",
  sign_count: 7,
  credential_backed_up: true,
  transports: ["internal", "hybrid"],
  friendly_name: "Work laptop",
};

let tenant: string;
const asTenant = () => ({ headers: { "tenant-id": tenant } });
const path = (userId: string, rest = "") => `/users/${encodeURIComponent(userId)}/authentication-methods${rest}`;
const api = (method: string, p: string, body?: unknown) => mgmt(method, p, { ...asTenant(), ...(body !== undefined ? { body } : {}) });

async function newUser() {
  return (await seedUser(tenant, `m-${crypto.randomUUID().slice(0, 8)}@example.com`)).user_id;
}

beforeAll(async () => {
  tenant = await createTenant();
});

describe("POST /users/{id}/authentication-methods", () => {
  it("stores a TOTP method with its secret encrypted under the method's own context and never returns it", async () => {
    const userId = await newUser();
    const res = await api("POST", path(userId), { type: "totp", totp_secret: "jbsw y3dp ehpk 3pxp jbsw y3dp ehpk 3pxp", name: "Phone app" });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toMatchObject({ type: "totp", confirmed: true, name: "Phone app" });
    expect(String(created.id)).toMatch(/^totp\|dev_/);
    expect(JSON.stringify(created)).not.toContain("JBSW");
    expect(Object.keys(created)).not.toContain("totp_secret");

    const [row] = await tenantSql<{ totp_secret_enc: string }>(tenant, "SELECT totp_secret_enc FROM authentication_methods WHERE id = ?", String(created.id));
    expect(row?.totp_secret_enc).toMatch(/^enc:v1:/);
    expect(row?.totp_secret_enc).not.toContain("JBSW");
    const cipher = await fieldCipher(env.ENCRYPTION_KEY);
    expect(await cipher.decrypt(String(row?.totp_secret_enc), `totp_secret:${created.id}`)).toBe(SECRET);
    await expect(cipher.decrypt(String(row?.totp_secret_enc), "totp_secret:totp|dev_other")).rejects.toThrow();

    const list = (await (await api("GET", path(userId))).json()) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(JSON.stringify(list)).not.toMatch(/JBSW|totp_secret|enc:v1/);
    const one = await api("GET", path(userId, `/${encodeURIComponent(String(created.id))}`));
    expect(await one.json()).toEqual(created);
  });

  it("stores a phone method in E.164 form, with sms as the preferred method by default", async () => {
    const userId = await newUser();
    const res = await api("POST", path(userId), { type: "phone", phone_number: "+1 (415) 555-0100" });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ type: "phone", phone_number: "+14155550100", preferred_authentication_method: "sms", confirmed: true });
    expect((await api("POST", path(userId), { type: "phone", phone_number: "555-0100" })).status).toBe(400);
  });

  it("stores a passkey's public credential data (SPEC §2.4 fields, key_id alias) and refuses its credential id twice", async () => {
    const userId = await newUser();
    const res = await api("POST", path(userId), PASSKEY);
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, unknown>;
    expect(created).toMatchObject({
      type: "passkey",
      credential_id: PASSKEY.credential_id,
      key_id: PASSKEY.credential_id,
      public_key: PASSKEY.public_key,
      sign_count: 7,
      credential_backed_up: true,
      credential_device_type: "multi_device",
      transports: ["internal", "hybrid"],
      friendly_name: "Work laptop",
      name: "Work laptop",
      confirmed: true,
    });
    const again = await api("POST", path(await newUser()), { ...PASSKEY, credential_id: undefined, key_id: PASSKEY.credential_id });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ statusCode: 409, errorCode: "authentication_method_conflict" });

    const roaming = await api("POST", path(userId), { type: "webauthn-roaming", key_id: "BwcH", public_key: "AQID", transports: ["usb", "nfc"] });
    expect(roaming.status).toBe(201);
    expect(await roaming.json()).toMatchObject({ type: "webauthn-roaming", credential_id: "BwcH", sign_count: 0, credential_backed_up: false, transports: ["usb", "nfc"] });
    const types = ((await (await api("GET", path(userId))).json()) as { type: string }[]).map((m) => m.type);
    expect(types).toEqual(["passkey", "webauthn-roaming"]);
  });

  it("allows one TOTP and one phone per user (409), any number of WebAuthn credentials", async () => {
    const userId = await newUser();
    expect((await api("POST", path(userId), { type: "totp", totp_secret: SECRET })).status).toBe(201);
    const second = await api("POST", path(userId), { type: "totp", totp_secret: SECRET });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { message: string }).message).toMatch(/already has a totp/);
    expect((await api("POST", path(userId), { type: "webauthn-platform", credential_id: "AAAA", public_key: "AQID" })).status).toBe(201);
    expect((await api("POST", path(userId), { type: "webauthn-platform", credential_id: "AAAB", public_key: "AQID" })).status).toBe(201);
  });

  it("refuses malformed, mistyped, oversized and odd input with a 400-family answer and writes nothing", async () => {
    const userId = await newUser();
    const cases: Array<[unknown, number, RegExp?]> = [
      ["{not json", 400, /Invalid JSON/],
      [{ type: "sms", phone_number: "+14155550100" }, 400],
      [{ type: "totp" }, 400, /totp_secret/],
      [{ type: "totp", totp_secret: "not base32 at all!" }, 400, /base32/],
      [{ type: "totp", totp_secret: "JBSWY3DP" }, 400, /at least 16/],
      [{ type: "totp", totp_secret: SECRET, phone_number: "+14155550100" }, 400, /Additional properties not allowed: phone_number/],
      [{ type: "totp", totp_secret: 12345 }, 400],
      [{ type: "phone", phone_number: "+1415555010\u0000" }, 400],
      [{ type: "totp", totp_secret: SECRET, name: "bad\ud800name" }, 400, /well-formed/],
      [{ type: "totp", totp_secret: SECRET, name: "a\u0007b" }, 400, /control/],
      [{ type: "passkey", public_key: "AQID" }, 400, /credential_id/],
      [{ type: "passkey", credential_id: "AQID", public_key: "***" }, 400, /base64url/],
      [{ type: "passkey", credential_id: "AQID", public_key: "AQID", transports: ["carrier-pigeon"] }, 400],
      [{ type: "passkey", credential_id: "AQID", public_key: "AQID", sign_count: -1 }, 400],
      [{ type: "__proto__" }, 400],
      [[], 400],
      [{ type: "totp", totp_secret: "A".repeat(200_000) }, 413],
    ];
    for (const [body, status, message] of cases) {
      const res = await api("POST", path(userId), body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      const error = (await res.json()) as { statusCode: number; message: string; errorCode: string };
      expect(error.statusCode).toBe(status);
      if (message) expect(error.message).toMatch(message);
    }
    expect(await (await api("GET", path(userId))).json()).toEqual([]);
  });
});

describe("GET and DELETE /users/{id}/authentication-methods", () => {
  it("pages in enrollment order with the reference platform's envelope (authenticators)", async () => {
    const userId = await newUser();
    for (const id of ["AAAA", "AAAB", "AAAC"]) {
      expect((await api("POST", path(userId), { type: "webauthn-roaming", credential_id: `${id}${userId.slice(-6)}`, public_key: "AQID", friendly_name: id })).status).toBe(201);
    }
    const all = (await (await api("GET", path(userId))).json()) as { name: string }[];
    expect(all.map((m) => m.name)).toEqual(["AAAA", "AAAB", "AAAC"]);
    const page = await (await api("GET", path(userId, "?page=1&per_page=2&include_totals=true"))).json();
    expect(page).toMatchObject({ start: 2, limit: 2, length: 1, total: 3, authenticators: [{ name: "AAAC" }] });
    expect((await api("GET", path(userId, "?per_page=1000"))).status).toBe(400);
  });

  it("deletes one method (then 404), a method of another user is not found, and DELETE without id removes all", async () => {
    const userId = await newUser();
    const otherId = await newUser();
    const totp = (await (await api("POST", path(userId), { type: "totp", totp_secret: SECRET })).json()) as { id: string };
    await api("POST", path(userId), { type: "phone", phone_number: "+447700900123" });
    const methodPath = (user: string) => path(user, `/${encodeURIComponent(totp.id)}`);

    expect((await api("GET", methodPath(otherId))).status).toBe(404);
    expect((await api("DELETE", methodPath(otherId))).status).toBe(404);
    expect((await api("DELETE", methodPath(userId))).status).toBe(204);
    const gone = await api("GET", methodPath(userId));
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ errorCode: "inexistent_authentication_method" });
    expect((await api("DELETE", methodPath(userId))).status).toBe(404);

    expect(((await (await api("GET", path(userId))).json()) as unknown[]).length).toBe(1);
    expect((await api("DELETE", path(userId))).status).toBe(204);
    expect(await (await api("GET", path(userId))).json()).toEqual([]);
  });

  it("deleting the user removes its methods and recovery codes", async () => {
    const userId = await newUser();
    expect((await api("POST", path(userId), { type: "totp", totp_secret: SECRET })).status).toBe(201);
    await tenantSql(tenant, "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (?, 'h', 1)", userId);
    expect((await api("DELETE", `/users/${encodeURIComponent(userId)}`)).status).toBe(204);
    expect(await tenantSql(tenant, "SELECT id FROM authentication_methods WHERE user_id = ?", userId)).toEqual([]);
    expect(await tenantSql(tenant, "SELECT code_hash FROM recovery_codes WHERE user_id = ?", userId)).toEqual([]);
  });

  it("answers inexistent_user for an unknown user on every route", async () => {
    const missing = "auth0|nobody-here";
    const answers = [
      await api("GET", path(missing)),
      await api("GET", path(missing, "/totp%7Cdev_x")),
      await api("POST", path(missing), { type: "totp", totp_secret: SECRET }),
      await api("DELETE", path(missing, "/totp%7Cdev_x")),
      await api("DELETE", path(missing)),
    ];
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ errorCode: "inexistent_user", message: "The user does not exist." });
    }
  });
});

describe("audit and reach", () => {
  it("records authentication_method.created / deleted (sapi) without the secret, and fapi for a refused write", async () => {
    const auditTenant = await createTenant();
    const userId = (await seedUser(auditTenant, "audit@example.com")).user_id;
    const p = `/users/${encodeURIComponent(userId)}/authentication-methods`;
    const created = (await (await mgmt("POST", p, { headers: { "tenant-id": auditTenant }, body: { type: "totp", totp_secret: SECRET } })).json()) as { id: string };
    expect((await mgmt("POST", p, { headers: { "tenant-id": auditTenant }, body: { type: "totp", totp_secret: SECRET } })).status).toBe(409);
    expect((await mgmt("DELETE", `${p}/${encodeURIComponent(created.id)}`, { headers: { "tenant-id": auditTenant } })).status).toBe(204);
    await relay(auditTenant);
    const logs = (await logsOf(auditTenant)).filter((l) => l.details.event_type.startsWith("authentication_method."));
    expect(logs.map((l) => [l.details.event_type, l.type]).sort()).toEqual([
      ["authentication_method.created", "fapi"],
      ["authentication_method.created", "sapi"],
      ["authentication_method.deleted", "sapi"],
    ]);
    const createdLog = logs.find((l) => l.type === "sapi" && l.details.event_type === "authentication_method.created");
    expect(createdLog?.details.target).toMatchObject({ type: "authentication_method", id: created.id, after: { type: "totp", user_id: userId } });
    expect(JSON.stringify(logs)).not.toContain("JBSW");
  });

  it("who can reach each route: no token, lacking scope, another tenant, an end user, a revoked token are refused", async () => {
    const scopes = ["read:authentication_methods", "create:authentication_methods", "delete:authentication_methods"];
    const kit = await reachKit(scopes);
    const userId = (await seedUser(kit.tenant, "reach@example.com")).user_id;
    const base = `/users/${encodeURIComponent(userId)}/authentication-methods`;
    const as = (method: string, p: string, body?: unknown) => mgmt(method, p, { token: kit.allowed, ...(body !== undefined ? { body } : {}) });

    await expectRefusals(kit, "POST", base, "create:authentication_methods", { type: "totp", totp_secret: SECRET });
    const created = await as("POST", base, { type: "totp", totp_secret: SECRET });
    expect(created.status).toBe(201);
    const one = `${base}/${encodeURIComponent(((await created.json()) as { id: string }).id)}`;
    await expectRefusals(kit, "GET", base, "read:authentication_methods");
    expect((await as("GET", base)).status).toBe(200);
    await expectRefusals(kit, "GET", one, "read:authentication_methods");
    expect((await as("GET", one)).status).toBe(200);
    await expectRefusals(kit, "DELETE", one, "delete:authentication_methods");
    expect((await as("DELETE", one)).status).toBe(204);
    await expectRefusals(kit, "DELETE", base, "delete:authentication_methods");
    expect((await as("DELETE", base)).status).toBe(204);
  });

  it("the management OpenAPI document lists the routes with their scopes", async () => {
    const spec = (await (await mgmt("GET", "/spec")).json()) as { paths: Record<string, Record<string, { "x-scope": string }>> };
    expect(spec.paths["/users/{id}/authentication-methods"]?.get?.["x-scope"]).toBe("read:authentication_methods");
    expect(spec.paths["/users/{id}/authentication-methods"]?.post?.["x-scope"]).toBe("create:authentication_methods");
    expect(spec.paths["/users/{id}/authentication-methods/{method_id}"]?.delete?.["x-scope"]).toBe("delete:authentication_methods");
  });
});
