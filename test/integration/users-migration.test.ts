import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { applyMigrations } from "../../src/objects/sql";
import { tenantMigrations } from "../../src/objects/tenant/core/migrations";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";

/**
 * Issue 9 point 1: migration 0006 rebuilds the users table under users who signed up before it. They keep
 * every column, gain their identity and their place in the trigram index, and stay searchable and
 * updatable; later writes keep the index and identities in step (triggers).
 */
it("users created before migration 0006 keep working: identities and the trigram index are backfilled", async () => {
  const stub = env.TENANT.getByName(`migration-${crypto.randomUUID()}`);
  const out = await runInDurableObject(stub, async (o: TenantObject, state) => {
    await state.storage.deleteAll();
    applyMigrations(state.storage, tenantMigrations.slice(0, 5));
    const sql = state.storage.sql;
    const legacy = [
      ["auth0|legacy1", "legacy.one@example.com", "$2b$10$abcdefghijklmnopqrstuv", "Legacy One", 1_700_000_000_000],
      ["auth0|legacy2", "legacy.two@example.com", null, "Legacy Two", 1_700_000_001_000],
    ] as const;
    for (const [id, email, hash, name, at] of legacy) {
      sql.exec(
        `INSERT INTO users (user_id, connection, email, email_verified, password_hash, name, nickname, app_metadata, logins_count, created_at, updated_at, registration_completed_at)
         VALUES (?, 'Username-Password-Authentication', ?, 1, ?, ?, 'nick', '{"plan":"old"}', 3, ?, ?, ?)`,
        id, email, hash, name, at, at, at,
      );
    }
    applyMigrations(state.storage, tenantMigrations);
    const users = o.users();
    const one = users.get("auth0|legacy1");
    const secret = users.findByEmail("Username-Password-Authentication", "LEGACY.ONE@example.com");
    const search = users.list({ q: "gacy.tw", ascending: false }, { offset: 0, limit: 10 });
    const byField = users.list({ q: "app_metadata.plan:old AND logins_count:3", ascending: true }, { offset: 0, limit: 10 });
    // Later writes keep the index in step: a renamed user is found by its new name only.
    sql.exec("UPDATE users SET name = 'Renamed Person' WHERE user_id = 'auth0|legacy2'");
    const renamed = users.list({ q: "Renamed", ascending: false }, { offset: 0, limit: 10 }).items.map((u) => u.user_id);
    const oldName = users.list({ q: '"Legacy Two"', ascending: false }, { offset: 0, limit: 10 }).items.map((u) => u.user_id);
    sql.exec("DELETE FROM users WHERE user_id = 'auth0|legacy2'");
    const afterDelete = users.list({ q: "Renamed", ascending: false }, { offset: 0, limit: 10 }).items.length;
    const identities = sql.exec("SELECT count(*) AS n FROM identities").one().n;
    const integrity = sql.exec("INSERT INTO users_fts (users_fts, rank) VALUES ('integrity-check', 1)").toArray();
    return { one, hash: secret?.password_hash, search: search.items.map((u) => u.user_id), byField: byField.items.map((u) => u.user_id), renamed, oldName, afterDelete, identities, integrity };
  });
  expect(out.one).toMatchObject({
    user_id: "auth0|legacy1",
    email: "legacy.one@example.com",
    email_verified: true,
    name: "Legacy One",
    logins_count: 3,
    app_metadata: { plan: "old" },
    linked_to: null,
    identities: [{ connection: "Username-Password-Authentication", provider: "auth0", user_id: "legacy1", isSocial: false }],
    created_at: new Date(1_700_000_000_000).toISOString(),
  });
  expect(out.hash).toBe("$2b$10$abcdefghijklmnopqrstuv");
  expect(out.search).toEqual(["auth0|legacy2"]);
  expect(out.byField).toEqual(["auth0|legacy1", "auth0|legacy2"]);
  expect(out.renamed).toEqual(["auth0|legacy2"]);
  expect(out.oldName).toEqual([]);
  expect(out.afterDelete).toBe(0);
  expect(out.identities).toBe(1);
  expect(out.integrity).toEqual([]);
});
