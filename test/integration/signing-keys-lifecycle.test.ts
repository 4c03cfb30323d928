import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renewExpiringKeys } from "../../src/worker/tenant/key-renewal";
import { createTenant } from "../helpers/api";
import { DAY, issueToken, jwks, listKeys, m2mClient, onTenant, verifyWithJwks } from "../helpers/keys";

/**
 * The key lifecycle against an injected clock (SPEC §4.2 "Signing keys"): activation, grace and expiry
 * follow the times with no write, and the JWKS holds exactly the published keys at each moment.
 */
const at = (ms: number) => vi.setSystemTime(new Date(ms));
const kids = async (tenantId: string) => (await jwks(tenantId)).keys.map((k) => k.kid).sort();

afterEach(() => {
  vi.useRealTimers();
});

async function setup() {
  const tenant = await createTenant();
  const client = await m2mClient(tenant, ["read:signing_keys"]);
  const [original] = await listKeys(tenant);
  if (!original) throw new Error("the tenant has no key");
  return { tenant, client, original };
}

async function rotate(tenant: string, body: Record<string, number>) {
  const res = await onTenant(tenant, "POST", "/keys/signing/rotate", body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { kid: string; cert: string };
}

describe("signing-key lifecycle with an injected clock", () => {
  it("activate_in_days publishes now and signs after the delay; grace counts from activation; then only the new key", async () => {
    const { tenant, client, original } = await setup();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    at(t0);
    const next = await rotate(tenant, { activate_in_days: 2, grace_days: 1 });

    // t0: both published, the original still signs; the new key is `next`.
    expect(await kids(tenant)).toEqual([original.kid, next.kid].sort());
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(original.kid);
    let keys = await listKeys(tenant);
    expect(keys.find((k) => k.kid === next.kid)).toMatchObject({ current: false, next: true, previous: false });
    expect(keys.find((k) => k.kid === original.kid)).toMatchObject({ current: true, next: false });

    // One second before activation: unchanged.
    at(t0 + 2 * DAY - 1000);
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(original.kid);

    // Activation: the new key signs, the original is `previous` and still published (grace).
    at(t0 + 2 * DAY + 1000);
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(next.kid);
    expect(await kids(tenant)).toEqual([original.kid, next.kid].sort());
    keys = await listKeys(tenant);
    expect(keys.find((k) => k.kid === next.kid)).toMatchObject({ current: true, next: false });
    expect(keys.find((k) => k.kid === original.kid)).toMatchObject({ current: false, previous: true, revoked: false });

    // Grace ends one day after activation (not after the call): only the new key is published.
    at(t0 + 3 * DAY - 1000);
    expect(await kids(tenant)).toEqual([original.kid, next.kid].sort());
    at(t0 + 3 * DAY + 1000);
    expect(await kids(tenant)).toEqual([next.kid]);
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(next.kid);
  });

  it("grace_days 0 unpublishes the outgoing key at the moment the new key activates", async () => {
    const { tenant, client, original } = await setup();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    at(t0);
    const next = await rotate(tenant, { activate_in_days: 1, grace_days: 0 });
    expect(await kids(tenant)).toEqual([original.kid, next.kid].sort());
    at(t0 + DAY + 1000);
    expect(await kids(tenant)).toEqual([next.kid]);
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(next.kid);
  });

  it("a key whose certificate expires leaves the JWKS and stops signing; the list shows it expired", async () => {
    const { tenant, client, original } = await setup();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    at(t0);
    // The new key activates at once and is valid for one day; the original stays published for two.
    const short = await rotate(tenant, { validity_days: 1, grace_days: 2 });
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(short.kid);
    const listed = (await listKeys(tenant)).find((k) => k.kid === short.kid);
    expect(Date.parse(String(listed?.expires_at))).toBe(t0 + DAY);

    at(t0 + DAY + 1000);
    expect(await kids(tenant)).toEqual([original.kid]);
    expect((await listKeys(tenant)).find((k) => k.kid === short.kid)).toMatchObject({ expired: true, current: false });
    // The original, still inside its grace period, is the only active key left: it signs again.
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(original.kid);
  });

  it("when every key has expired, the newest keeps signing, published and shown expired, instead of none", async () => {
    const { tenant, client, original } = await setup();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    at(t0 + 400 * DAY);
    const token = await issueToken(tenant, client);
    expect((await verifyWithJwks(tenant, token)).kid).toBe(original.kid);
    expect(await kids(tenant)).toEqual([original.kid]);
    expect((await listKeys(tenant)).find((k) => k.kid === original.kid)).toMatchObject({ current: true, expired: true });
  });

  it("the hourly renewal gives a key that signs a new certificate 30 days before it expires: same kid, a year more", async () => {
    const { tenant, client, original } = await setup();
    const expiresAt = Date.parse(String((await listKeys(tenant)).find((k) => k.kid === original.kid)?.expires_at));
    vi.useFakeTimers({ toFake: ["Date"] });
    at(expiresAt - 31 * DAY);
    expect(await renewExpiringKeys(env, tenant)).toEqual([]);
    const now = expiresAt - 29 * DAY;
    at(now);
    expect(await renewExpiringKeys(env, tenant)).toEqual([original.kid]);
    const renewed = (await listKeys(tenant)).find((k) => k.kid === original.kid);
    expect(Date.parse(String(renewed?.expires_at))).toBe(now + 365 * DAY);
    expect(renewed?.cert).not.toBe(original.cert);
    // Nothing else changed: the same key signs and is the one published; a second run renews nothing.
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(original.kid);
    expect(await kids(tenant)).toEqual([original.kid]);
    expect(await renewExpiringKeys(env, tenant)).toEqual([]);
  });

  it("revoking the previous key unpublishes it at once; revoking the current key puts a new key in its place", async () => {
    const { tenant, client, original } = await setup();
    const second = await rotate(tenant, { grace_days: 5 });
    expect(await kids(tenant)).toEqual([original.kid, second.kid].sort());

    const revoked = await onTenant(tenant, "PUT", `/keys/signing/${original.kid}/revoke`);
    expect(revoked.status).toBe(201);
    expect(await revoked.json()).toEqual({ kid: original.kid, cert: original.cert });
    expect(await kids(tenant)).toEqual([second.kid]);
    expect((await listKeys(tenant)).find((k) => k.kid === original.kid)).toMatchObject({ revoked: true, current: false });
    expect((await onTenant(tenant, "PUT", `/keys/signing/${original.kid}/revoke`)).status).toBe(400);

    // The key that signs now: a replacement takes over in the same transaction.
    expect((await onTenant(tenant, "PUT", `/keys/signing/${second.kid}/revoke`)).status).toBe(201);
    const published = await kids(tenant);
    expect(published).toHaveLength(1);
    expect(published).not.toContain(second.kid);
    const signed = await verifyWithJwks(tenant, await issueToken(tenant, client));
    expect(signed.kid).toBe(published[0]);
    expect((await listKeys(tenant)).filter((k) => k.current).map((k) => k.kid)).toEqual(published);
  });

  it("a token signed by a key that was revoked is refused by the management API", async () => {
    const { tenant, original } = await setup();
    const client = await m2mClient(tenant, ["read:signing_keys"]);
    const old = await issueToken(tenant, client);
    const { mgmt } = await import("../helpers/api");
    expect((await mgmt("GET", "/keys/signing", { token: old })).status).toBe(200);
    await rotate(tenant, { grace_days: 1 });
    expect((await mgmt("GET", "/keys/signing", { token: old })).status).toBe(200);
    expect((await onTenant(tenant, "PUT", `/keys/signing/${original.kid}/revoke`)).status).toBe(201);
    expect((await mgmt("GET", "/keys/signing", { token: old })).status).toBe(403);
  });
});

describe("revoking a scheduled key", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("cancels the rotation: the outgoing key keeps signing and stays published past the planned grace end", async () => {
    const { tenant, client, original } = await setup();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    at(t0);
    const next = await rotate(tenant, { activate_in_days: 1, grace_days: 1 });
    expect((await onTenant(tenant, "PUT", `/keys/signing/${next.kid}/revoke`)).status).toBe(201);
    expect(await kids(tenant)).toEqual([original.kid]);
    at(t0 + 3 * DAY);
    expect(await kids(tenant)).toEqual([original.kid]);
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).kid).toBe(original.kid);
    expect((await listKeys(tenant)).find((k) => k.kid === original.kid)).toMatchObject({ current: true, previous: false });
  });
});
