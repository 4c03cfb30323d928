import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { LuceneError, type LuceneSqlConfig, luceneToSql, type SqlParam } from "../../../../src/shared/lucene";

/** Runs compiled filters against real rows in a tenant Durable Object's SQLite (scratch tables). */
const stub = () => env.TENANT.getByName("lucene-test");
const exec = (sql: string, params: SqlParam[] = []) =>
  runInDurableObject(stub(), (_o, state) => state.storage.sql.exec(sql, ...params).toArray());

const via = { outer: "user_id", table: "_q_identities", inner: "user_id" };
const base: LuceneSqlConfig = {
  fields: {
    email: { kind: "email", column: "email" },
    name: { kind: "text", column: "name" },
    nickname: { kind: "text", column: "nickname" },
    given_name: { kind: "text", column: "given_name" },
    family_name: { kind: "text", column: "family_name" },
    // The reference platform: only email, name, given_name, family_name, nickname are case-insensitive.
    username: { kind: "exact", column: "username" },
    phone_number: { kind: "exact", column: "phone_number" },
    user_id: { kind: "exact", column: "user_id" },
    connection: { kind: "exact", column: "connection", via },
    "identities.connection": { kind: "exact", column: "connection", via },
    "identities.provider": { kind: "exact", column: "provider", via },
    email_verified: { kind: "boolean", column: "email_verified" },
    blocked: { kind: "boolean", column: "blocked" },
    app_metadata: { kind: "json", column: "app_metadata" },
    user_metadata: { kind: "json", column: "user_metadata" },
    created_at: { kind: "date", column: "created_at" },
    updated_at: { kind: "date", column: "updated_at" },
    last_login: { kind: "date", column: "last_login" },
    logins_count: { kind: "integer", column: "logins_count" },
  },
  bareFields: ["email", "name", "nickname", "user_id"],
};
/** Same fields, bare terms of 3+ characters served by a trigram FTS5 table. */
const withFts: LuceneSqlConfig = {
  ...base,
  bareFts: "user_id IN (SELECT user_id FROM _q_users_fts WHERE _q_users_fts MATCH ?)",
};
/** Per-field FTS expressions (column filters) instead of one bare expression. */
const perFieldFts: LuceneSqlConfig = {
  ...base,
  fields: {
    ...base.fields,
    name: { kind: "text", column: "name", fts: "user_id IN (SELECT user_id FROM _q_users_fts WHERE _q_users_fts MATCH ('{name} : ' || ?))" },
    email: { kind: "email", column: "email", fts: "user_id IN (SELECT user_id FROM _q_users_fts WHERE _q_users_fts MATCH ('{email} : ' || ?))" },
  },
};

const ms = (iso: string) => Date.parse(iso);
const rows: Record<string, SqlParam>[] = [
  { user_id: "auth0|alice", email: "alice@example.com", name: "Alice Smith", nickname: "ally", given_name: "Alice", family_name: "Smith", username: "alice01", phone_number: "+15550001", email_verified: 1, blocked: 0, app_metadata: '{"plan":"pro","tier":3,"beta":true,"org":{"id":"o1"}}', user_metadata: "{}", created_at: ms("2024-01-15T10:00:00Z"), updated_at: ms("2024-01-16T00:00:00Z"), last_login: ms("2024-03-01T08:00:00Z"), logins_count: 5 },
  { user_id: "auth0|bob", email: "bob@example.org", name: "Bob OR Builder", nickname: "bobby", given_name: "Bob", family_name: "Builder", username: null, phone_number: null, email_verified: 0, blocked: 1, app_metadata: '{"plan":"free","tier":"3","beta":false}', user_metadata: null, created_at: ms("2024-02-01T00:00:00Z"), updated_at: ms("2024-02-01T00:00:00Z"), last_login: null, logins_count: 0 },
  { user_id: "google-oauth2|123", email: "carol@test.io", name: 'Carol "CJ" Jones', nickname: "cj", given_name: "Carol", family_name: "Jones", username: null, phone_number: null, email_verified: 1, blocked: 0, app_metadata: null, user_metadata: '{"lang":"fr","__proto__":"p","a b":"space"}', created_at: ms("2023-12-31T23:59:59.999Z"), updated_at: ms("2024-01-01T00:00:00Z"), last_login: ms("2024-01-02T00:00:00Z"), logins_count: 100 },
  { user_id: "auth0|dave", email: "dave@example.com", name: "100% Dave_x", nickname: null, given_name: null, family_name: null, username: "dave", phone_number: null, email_verified: 1, blocked: 0, app_metadata: '{"plan":"pro"}', user_metadata: null, created_at: ms("2024-01-31T12:00:00Z"), updated_at: ms("2024-01-31T12:00:00Z"), last_login: ms("2024-01-31T13:00:00Z"), logins_count: 12 },
  { user_id: "auth0|emile", email: "emile@example.com", name: "Émile Zola", nickname: "' OR 1=1 --", given_name: "Émile", family_name: "Zola", username: null, phone_number: null, email_verified: 0, blocked: 0, app_metadata: null, user_metadata: null, created_at: ms("2024-03-01T00:00:00Z"), updated_at: ms("2024-03-01T00:00:00Z"), last_login: null, logins_count: 1 },
];
const identities: [string, string, string][] = [
  ["auth0|alice", "Username-Password-Authentication", "auth0"],
  ["auth0|bob", "Username-Password-Authentication", "auth0"],
  ["auth0|bob", "google-oauth2", "google-oauth2"],
  ["google-oauth2|123", "google-oauth2", "google-oauth2"],
  ["auth0|dave", "Username-Password-Authentication", "auth0"],
  ["auth0|emile", "email", "email"],
];
const A = "auth0|alice", B = "auth0|bob", C = "google-oauth2|123", D = "auth0|dave", E = "auth0|emile";
const ALL = [A, B, D, E, C].sort();

beforeAll(async () => {
  const cols = Object.keys(rows[0] as object);
  await exec("DROP TABLE IF EXISTS _q_users");
  await exec("DROP TABLE IF EXISTS _q_identities");
  await exec("DROP TABLE IF EXISTS _q_users_fts");
  await exec(`CREATE TABLE IF NOT EXISTS _q_users (${cols.map((c) => (c === "user_id" ? "user_id TEXT PRIMARY KEY" : c)).join(", ")})`);
  await exec("CREATE TABLE IF NOT EXISTS _q_identities (user_id TEXT, connection TEXT, provider TEXT)");
  await exec("CREATE VIRTUAL TABLE IF NOT EXISTS _q_users_fts USING fts5(user_id, email, name, nickname, tokenize='trigram')");
  for (const r of rows) {
    await exec(`INSERT INTO _q_users (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`, cols.map((c) => r[c] ?? null));
    await exec("INSERT INTO _q_users_fts (user_id, email, name, nickname) VALUES (?, ?, ?, ?)", [r.user_id ?? null, r.email ?? null, r.name ?? null, r.nickname ?? null]);
  }
  for (const i of identities) await exec("INSERT INTO _q_identities VALUES (?, ?, ?)", i);
});

async function match(q: string, config: LuceneSqlConfig = base): Promise<string[]> {
  const filter = luceneToSql(q, config);
  if (!filter) throw new Error("expected a filter");
  expect(filter.where).not.toContain("'; DROP");
  const out = await exec(`SELECT user_id FROM _q_users WHERE ${filter.where} ORDER BY user_id`, filter.params);
  return out.map((r) => String(r.user_id));
}

describe("lucene compiled filters on real SQLite rows (SPEC §4.2)", () => {
  const cases: [string, string[]][] = [
    ["alice@example.com", [A]],
    ["  ALICE@Example.COM ", [A]],
    ["email:Alice@Example.com", [A]],
    ["example.com", [A, D, E]],
    ["EXAMPLE", [A, B, D, E]],
    ["ice", [A]],
    ["al", [A]],
    ["ob", [B]],
    ["google-oauth2|123", [C]],
    ["oauth2|", [C]],
    ["bob OR carol", [B, C]],
    ['"Bob OR Builder"', [B]],
    ['name:"Bob OR Builder"', [B]],
    ['"or builder"', [B]],
    ['name:"Carol \\"CJ\\" Jones"', [C]],
    ['"\\"CJ\\""', [C]],
    ["alice bob OR carol", [C]],
    ["example bob OR carol", [B, C]],
    ["example (bob OR carol)", [B]],
    ["example AND -bob", [A, D, E]],
    ["NOT blocked:true", [A, C, D, E]],
    ["-nickname:bobby", [A, C, D, E]],
    ["NOT nickname:*", [D]],
    ["name:alice*", [A]],
    ["name:ALICE", []],
    ["name:\"alice smith\"", [A]],
    ["given_name:alice family_name:SMITH", [A]],
    ["username:dave", [D]],
    ["username:DAVE", []],
    ["app_metadata.plan:PRO", []],
    ["phone_number:\\+15550001", [A]],
    ["user_id:auth0|bob", [B]],
    ["user_id:AUTH0|bob", []],
    ["user_id:auth0*", [A, B, D, E]],
    ["ali*", [A]],
    ["connection:google-oauth2", [B, C]],
    ["identities.connection:Username-Password-Authentication -blocked:true", [A, D]],
    ["identities.provider:email", [E]],
    ["email_verified:true", [A, C, D]],
    ["email_verified:FALSE", [B, E]],
    ["blocked:true", [B]],
    ["app_metadata.plan:pro", [A, D]],
    ['app_metadata.plan:"pro"', [A, D]],
    ["app_metadata.tier:3", [A, B]],
    ['app_metadata.tier:"3"', [B]],
    ["app_metadata.beta:true", [A]],
    ["app_metadata.beta:false", [B]],
    ["app_metadata.org.id:o1", [A]],
    ["app_metadata.pl*", []],
    ["app_metadata.plan:pr*", [A, D]],
    ["user_metadata.__proto__:p", [C]],
    ["user_metadata.constructor:p", []],
    ['user_metadata.a\\ b:space', [C]],
    ["_exists_:app_metadata", [A, B, D]],
    ["_exists_:app_metadata.beta", [A, B]],
    ["_exists_:last_login", [A, C, D]],
    ["NOT _exists_:user_metadata.lang", [A, B, D, E]],
    ["created_at:[2024-01-01 TO 2024-01-31]", [A, D]],
    ["created_at:[2024-01-01 TO 2024-01-31}", [A]],
    ["created_at:{2023-12-31 TO *]", [A, B, D, E]],
    ["created_at:[* TO 2023-12-31]", [C]],
    ["created_at:2024-02-01", [B]],
    ["created_at:2024-02-01T00:00:00Z", [B]],
    [`created_at:${ms("2024-02-01T00:00:00Z")}`, [B]],
    ["created_at:[2024-01-15T10:00:00Z TO 2024-01-31T12:00:00.000Z}", [A]],
    ["last_login:[2024-02-01 TO *]", [A]],
    ["updated_at:[* TO 2024-01-01]", [C]],
    ["logins_count:[5 TO 100]", [A, C, D]],
    ["logins_count:{5 TO 100}", [D]],
    ["logins_count:[10 TO *]", [C, D]],
    ["logins_count:0", [B]],
    ["100%", [D]],
    ["_x", [D]],
    ["%", [D]],
    ["' OR 1=1", [E]],
    ['"\' OR 1=1 --"', [E]],
    ["name:x' OR '1'='1", []],
    ["x'\\) OR 1=1", [E]],
    ['"\'; DROP TABLE _q_users; --"', []],
    ["Émile", [E]],
    ["name:émile*", []],
    ["name:Émile*", [E]],
  ];
  it.each(cases)("%j matches the expected users", async (q, expected) => {
    expect(await match(q)).toEqual([...expected].sort());
  });

  it.each(cases.filter(([q]) => !q.includes(":") && !q.startsWith("_")))(
    "%j gives the same users through the trigram FTS index (one bare expression and per field)",
    async (q, expected) => {
      expect(await match(q, withFts)).toEqual([...expected].sort());
      expect(await match(q, perFieldFts)).toEqual([...expected].sort());
    },
  );

  it("emits the FTS expression for 3+ character terms and falls back below", () => {
    expect(luceneToSql("ali", withFts)?.where).toContain("_q_users_fts MATCH ?");
    expect(luceneToSql("ali", withFts)?.params).toEqual(['"ali"']);
    expect(luceneToSql("al", withFts)?.where).not.toContain("MATCH");
    expect(luceneToSql('"a\\"b" OR c', withFts)?.params[0]).toBe('"a""b"');
  });

  it("per-field FTS column filters find name and email substrings", async () => {
    expect(await match("smith", perFieldFts)).toEqual([A]);
    expect(await match("test.io", perFieldFts)).toEqual([C]);
    expect(await match("bobby", perFieldFts)).toEqual([B]);
  });

  it("hostile queries never drop or widen: the table survives and bad input is a LuceneError", async () => {
    for (const q of ['"; DROP TABLE _q_users', "' OR 1=1 --", "x') OR 1=1 OR ('", "constructor:x", "__proto__:x", "toString:x", "app_metadata:x"]) {
      expect(() => luceneToSql(q, base)).toThrow(LuceneError);
    }
    expect(await match("name:x' OR '1'='1\\'")).toEqual([]);
    expect((await exec("SELECT count(*) AS n FROM _q_users"))[0]?.n).toBe(rows.length);
    expect(await match("a OR NOT a")).toEqual(ALL);
  });

  it("empty or whitespace q is no filter", () => {
    expect(luceneToSql("", base)).toBeNull();
    expect(luceneToSql("  ", base)).toBeNull();
    expect(luceneToSql(undefined, base)).toBeNull();
  });
});
