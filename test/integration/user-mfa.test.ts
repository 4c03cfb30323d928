import { beforeAll, describe, expect, it } from "vitest";
import { recoveryCodeHash } from "../../src/worker/login/mfa/recovery-codes";
import { mgmt, uniqueId } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { tenantSql } from "../helpers/outbox";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 2: the users-side MFA routes of the reference platform, over the same authentication methods
 * login enrolls (GET /users/{id}/enrollments, DELETE /users/{id}/multifactor/{provider}, recovery-code
 * regeneration, invalidate-remember-browser, DELETE /users/{id}/authenticators, PUT and PATCH of
 * authentication methods).
 */

const SCOPES = ["read:users", "update:users", "delete:guardian_enrollments", "update:authentication_methods", "create:authentication_methods", "read:authentication_methods"];
const TOTP = { type: "totp", totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", name: "App" };
const PHONE = { type: "phone", phone_number: "+15555550100", name: "Mobile" };
let kit: ReachKit;
const as = (extra: { body?: unknown } = {}) => ({ token: kit.allowed, headers: { "tenant-id": kit.tenant }, ...extra });
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;
const u = (id: string) => `/users/${encodeURIComponent(id)}`;

beforeAll(async () => {
  kit = await reachKit(SCOPES);
});

async function userWith(methods: unknown[]) {
  const user = await seedUser(kit.tenant, `${uniqueId("mfa")}@example.com`);
  for (const body of methods) expect((await mgmt("POST", `${u(user.user_id)}/authentication-methods`, as({ body }))).status).toBe(201);
  return user.user_id;
}

describe("users' MFA routes", () => {
  it("GET /users/{id}/enrollments lists the user's factors as guardian enrollments", async () => {
    const userId = await userWith([TOTP, PHONE]);
    const res = await mgmt("GET", `${u(userId)}/enrollments`, as());
    expect(res.status).toBe(200);
    const list = await json<Record<string, unknown>[]>(res);
    expect(list).toEqual([
      expect.objectContaining({ status: "confirmed", type: "authenticator", auth_method: "authenticator", name: "App" }),
      expect.objectContaining({ status: "confirmed", type: "sms", auth_method: "sms", phone_number: "+15555550100", identifier: "+15555550100" }),
    ]);
    expect(JSON.stringify(list)).not.toMatch(/JBSW|totp_secret/);
    expect((await mgmt("GET", `${u("auth0|nobody")}/enrollments`, as())).status).toBe(404);
  });

  it("DELETE /users/{id}/multifactor/google-authenticator removes the TOTP factor only; duo has nothing to remove; others are 400", async () => {
    const userId = await userWith([TOTP, PHONE]);
    expect((await mgmt("DELETE", `${u(userId)}/multifactor/google-authenticator`, as())).status).toBe(204);
    const left = await json<{ type: string }[]>(await mgmt("GET", `${u(userId)}/authentication-methods`, as()));
    expect(left.map((m) => m.type)).toEqual(["phone"]);
    expect((await mgmt("DELETE", `${u(userId)}/multifactor/duo`, as())).status).toBe(204);
    const bad = await mgmt("DELETE", `${u(userId)}/multifactor/yubikey`, as());
    expect(bad.status).toBe(400);
    expect((await json<{ message: string }>(bad)).message).toContain("yubikey");
    expect((await mgmt("DELETE", `${u("auth0|nobody")}/multifactor/google-authenticator`, as())).status).toBe(404);
  });

  it("POST /users/{id}/recovery-code-regeneration replaces the codes with one new code, shown once", async () => {
    const userId = await userWith([TOTP]);
    const first = await json<{ recovery_code: string }>(await mgmt("POST", `${u(userId)}/recovery-code-regeneration`, as()));
    expect(first.recovery_code).toMatch(/^[A-Z2-9]{5}-[A-Z2-9]{5}$/);
    const second = await json<{ recovery_code: string }>(await mgmt("POST", `${u(userId)}/recovery-code-regeneration`, as()));
    expect(second.recovery_code).not.toBe(first.recovery_code);
    const rows = await tenantSql<{ code_hash: string }>(kit.tenant, "SELECT code_hash FROM recovery_codes WHERE user_id = ?", userId);
    expect(rows.map((r) => r.code_hash)).toEqual([await recoveryCodeHash(second.recovery_code)]);
    expect((await mgmt("POST", `${u("auth0|nobody")}/recovery-code-regeneration`, as())).status).toBe(404);
  });

  it("invalidate-remember-browser is 204 for a user (nothing is remembered) and 404 for an unknown one", async () => {
    const userId = await userWith([]);
    expect((await mgmt("POST", `${u(userId)}/multifactor/actions/invalidate-remember-browser`, as())).status).toBe(204);
    expect((await mgmt("POST", `${u("auth0|nobody")}/multifactor/actions/invalidate-remember-browser`, as())).status).toBe(404);
  });

  it("DELETE /users/{id}/authenticators removes every factor and recovery code", async () => {
    const userId = await userWith([TOTP, PHONE]);
    await mgmt("POST", `${u(userId)}/recovery-code-regeneration`, as());
    expect((await mgmt("DELETE", `${u(userId)}/authenticators`, as())).status).toBe(204);
    expect(await json(await mgmt("GET", `${u(userId)}/enrollments`, as()))).toEqual([]);
    expect(await tenantSql(kit.tenant, "SELECT 1 FROM recovery_codes WHERE user_id = ?", userId)).toHaveLength(0);
    expect((await mgmt("DELETE", `${u("auth0|nobody")}/authenticators`, as())).status).toBe(404);
  });

  it("PUT /users/{id}/authentication-methods replaces the set, all or nothing", async () => {
    const userId = await userWith([TOTP]);
    const other = await userWith([]);
    const res = await mgmt("PUT", `${u(userId)}/authentication-methods`, as({ body: [PHONE, { ...TOTP, name: "New app" }] }));
    expect(res.status).toBe(200);
    const replaced = await json<{ id: string; type: string; name: string }[]>(res);
    expect(replaced.map((m) => [m.type, m.name])).toEqual([["phone", "Mobile"], ["totp", "New app"]]);
    const listed = await json<{ id: string }[]>(await mgmt("GET", `${u(userId)}/authentication-methods`, as()));
    expect(listed.map((m) => m.id)).toEqual(replaced.map((m) => m.id));

    // A method the store refuses (the same phone twice) undoes the whole replacement.
    const refused = await mgmt("PUT", `${u(userId)}/authentication-methods`, as({ body: [TOTP, PHONE, PHONE] }));
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect((await json<{ id: string }[]>(await mgmt("GET", `${u(userId)}/authentication-methods`, as()))).map((m) => m.id)).toEqual(replaced.map((m) => m.id));

    for (const body of [{ type: "totp" }, [{ type: "fax" }], Array.from({ length: 21 }, () => PHONE)]) {
      expect((await mgmt("PUT", `${u(other)}/authentication-methods`, as({ body }))).status).toBe(400);
    }
    expect((await mgmt("PUT", `${u("auth0|nobody")}/authentication-methods`, as({ body: [TOTP] }))).status).toBe(404);
  });

  it("PATCH /users/{id}/authentication-methods/{method_id} renames, and sets sms or voice on a phone only", async () => {
    const userId = await userWith([TOTP, PHONE]);
    const [totp, phone] = await json<{ id: string }[]>(await mgmt("GET", `${u(userId)}/authentication-methods`, as()));
    const path = (m?: { id: string }) => `${u(userId)}/authentication-methods/${encodeURIComponent(String(m?.id))}`;
    const renamed = await mgmt("PATCH", path(totp), as({ body: { name: "Renamed" } }));
    expect(renamed.status).toBe(200);
    expect(await json(renamed)).toMatchObject({ id: totp?.id, type: "totp", name: "Renamed" });
    const voice = await mgmt("PATCH", path(phone), as({ body: { preferred_authentication_method: "voice" } }));
    expect(await json(voice)).toMatchObject({ type: "phone", preferred_authentication_method: "voice" });
    expect((await mgmt("PATCH", path(totp), as({ body: { preferred_authentication_method: "voice" } }))).status).toBe(400);
    for (const body of [{}, { name: "" }, { preferred_authentication_method: "fax" }, { confirmed: false }]) {
      expect((await mgmt("PATCH", path(totp), as({ body }))).status, JSON.stringify(body)).toBe(400);
    }
    expect((await mgmt("PATCH", `${u(userId)}/authentication-methods/totp%7Cdev_nothing`, as({ body: { name: "x" } }))).status).toBe(404);
  });

  it("who can reach: every refusal on each route", async () => {
    const id = u("auth0|someone");
    await expectRefusals(kit, "GET", `${id}/enrollments`, "read:users");
    await expectRefusals(kit, "DELETE", `${id}/multifactor/google-authenticator`, "update:users");
    await expectRefusals(kit, "POST", `${id}/recovery-code-regeneration`, "update:users");
    await expectRefusals(kit, "POST", `${id}/multifactor/actions/invalidate-remember-browser`, "update:users");
    await expectRefusals(kit, "DELETE", `${id}/authenticators`, "delete:guardian_enrollments");
    await expectRefusals(kit, "PUT", `${id}/authentication-methods`, "update:authentication_methods", [TOTP]);
    await expectRefusals(kit, "PATCH", `${id}/authentication-methods/totp%7Cdev_x`, "update:authentication_methods", { name: "x" });
  });
});
