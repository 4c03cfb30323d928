import { beforeAll, describe, expect, it } from "vitest";
import { tick } from "../helpers/management";
import { tenantSql } from "../helpers/outbox";
import { api, createUser, DB, emailUser, failure, path, type UserBody, usersTenant } from "../helpers/users";

/** Issue 9 points 2 and 3: `q` (SPEC §4.2 "Search rules") and pagination (SPEC §4.3) on GET /users. */

let tenant: string;
const people: Record<string, UserBody> = {};

beforeAll(async () => {
  tenant = await usersTenant();
  const seed: Array<[string, string, Record<string, unknown>]> = [
    ["ann", "ann@example.com", { name: "Ann Smith", email_verified: true, app_metadata: { plan: "pro", tier: 3 } }],
    ["joann", "joann@example.com", { name: "Jo Ann", app_metadata: { plan: "free" } }],
    ["bob", "bob@example.org", { name: "Bob OR Builder", blocked: true }],
    ["carol", "carol@test.io", { name: 'Carol "CJ" Jones', user_metadata: { lang: "fr" } }],
    ["dave", "dave@example.com", { name: "100% Dave_x", nickname: "' OR 1=1 --" }],
    ["emile", "emile@example.com", { name: "Émile Zola", given_name: "Émile" }],
  ];
  for (const [key, email, extra] of seed) {
    people[key] = await emailUser(tenant, email, { user_id: `u${Object.keys(people).length + 1}`, ...extra });
    await tick();
  }
  people.db = await createUser(tenant, { connection: DB, email: "db-user@example.net", password: "Sufficient-Pw-1", user_id: "u7" });
  await tick();
  // A linked secondary account: hidden from every listing and search.
  const secondary = await emailUser(tenant, "sec@example.com", { user_id: "u8", name: "Secondary Ann" });
  const linked = await api(tenant, "POST", path(people.ann?.user_id as string, "/identities"), { provider: "email", user_id: secondary.user_id });
  expect(linked.status, await linked.clone().text()).toBe(201);
});

const search = async (q: string, extra = "") => {
  const res = await api(tenant, "GET", `/users?q=${encodeURIComponent(q)}&search_engine=v3&per_page=100${extra}`);
  return { status: res.status, body: (await res.json()) as UserBody[] & { message?: string } };
};

const keysOf = (users: UserBody[]) => users.map((u) => Object.entries(people).find(([, p]) => p.user_id === u.user_id)?.[0] ?? u.user_id).sort();

describe("q (SPEC §4.2 Search rules)", () => {
  const cases: Array<[string, string[]]> = [
    ["ann@example.com", ["ann"]], // a complete email is equality, not a substring (joann@example.com stays out)
    ["ANN@Example.com", ["ann"]],
    ["ann", ["ann", "joann"]], // partial terms are substrings (trigram index)
    ["an", ["ann", "joann"]], // shorter than a trigram: still a substring
    ["example.org", ["bob"]],
    ["email:ann@example.com", ["ann"]],
    ["email:ann*", ["ann"]],
    ['name:"Bob OR Builder"', ["bob"]], // an OR inside quotes is text
    ['"Bob OR Builder"', ["bob"]],
    ['name:"Carol \\"CJ\\" Jones"', ["carol"]], // an escaped quote does not end the quote
    ["ann OR bob", ["ann", "bob", "joann"]],
    ["ann joann OR bob", ["bob", "joann"]], // (ann AND joann) OR bob
    ["ann -joann", ["ann"]],
    ["ann AND NOT joann", ["ann"]],
    ["_exists_:user_metadata.lang", ["carol"]],
    ["app_metadata.plan:pro", ["ann"]],
    ["app_metadata.tier:3", ["ann"]],
    ["blocked:true", ["bob"]],
    ["email_verified:true", ["ann"]],
    ["identities.connection:Username-Password-Authentication", ["db"]],
    ["connection:email AND name:ann*", ["ann"]],
    ["user_id:email|u5", ["dave"]],
    ["name:émile*", []], // SQLite lower() folds ASCII only, like the reference comparison of stored text
    ["Émile", ["emile"]],
    ['"\' OR 1=1 --"', ["dave"]],
    ["nickname:\"' OR 1=1 --\"", ["dave"]],
    ["sec@example.com", []], // the linked secondary is not a user of its own any more
    ["Secondary", []],
    ["x' OR '1'='1", []],
    ["email:*@example.org", ["bob"]], // the reference platform's suffix wildcard (3+ characters)
    ["name:*smith", ["ann"]],
    ["name:*ANN*", ["ann", "joann"]],
    ["email.domain:EXAMPLE.com", ["ann", "dave", "emile", "joann"]],
    ["_exists_:last_ip", []],
    ["app_metadata.__proto__:x", []],
  ];
  for (const [q, expected] of cases) {
    it(`q=${q} matches ${expected.join(", ") || "nobody"}`, async () => {
      const { status, body } = await search(q);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(keysOf(body)).toEqual([...expected].sort());
    });
  }

  it("matches on a created_at range", async () => {
    const q = `created_at:[${people.ann?.created_at} TO ${people.joann?.created_at}]`;
    expect(keysOf((await search(q)).body)).toEqual(["ann", "joann"]);
  });

  it("answers a bad query with a 400 naming the problem, never a 500 or everything", async () => {
    const bad: Array<[string, RegExp]> = [
      ["shoe_size:42", /unknown field 'shoe_size'/],
      ["__proto__:x", /unknown field '__proto__'/],
      ["constructor:x", /unknown field 'constructor'/],
      ['"unbalanced', /unbalanced quote/],
      ["(ann OR bob", /unbalanced parenthesis/],
      ["ann AND", /dangling AND/],
      ["blocked:maybe", /true or false/],
      ["name:*an", /at least 3 characters/],
      ["app_metadata.plan:*ro", /wildcards are not supported/],
      ["created_at:[yesterday TO *]", /ISO date/],
      ["a\u0000b", /NUL/],
      ["a\u0007b", /control character/],
      ["x".repeat(2049), /longer than 2048 bytes/],
      ["y".repeat(10 * 1024), /longer than 2048 bytes/],
      ["x'); DROP TABLE users; --", /dangling '-'/],
    ];
    for (const [q, message] of bad) {
      const { status, body } = await search(q);
      expect(status, q.slice(0, 40)).toBe(400);
      expect(body.message, q.slice(0, 40)).toMatch(message);
    }
    expect(await tenantSql<{ n: number }>(tenant, "SELECT count(*) AS n FROM users")).toEqual([{ n: 8 }]);
  });

  it("never fails on a percent-encoded lone surrogate or invalid UTF-8", async () => {
    for (const raw of ["%ED%A0%80", "%FF%FE", "%E0%A4%A"]) {
      const res = await api(tenant, "GET", `/users?q=${raw}`);
      expect([200, 400], raw).toContain(res.status);
    }
  });

  it("binds a query over the 100-parameter limit of a Durable Object query", async () => {
    const q = Array.from({ length: 60 }, (_, i) => `app_metadata.k${i}:${i}`).join(" OR ");
    const { status, body } = await search(`(${q}) OR app_metadata.plan:free`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(keysOf(body)).toEqual(["joann"]);
  });

  it("filters by connection (the reference platform's connection parameter)", async () => {
    const res = await api(tenant, "GET", `/users?connection=${DB}`);
    expect(keysOf((await res.json()) as UserBody[])).toEqual(["db"]);
  });

  it("refuses search_engine v1", async () => {
    expect((await api(tenant, "GET", "/users?q=ann&search_engine=v1")).status).toBe(400);
    expect((await api(tenant, "GET", "/users?q=ann&search_engine=v2")).status).toBe(200);
  });
});

describe("pagination (SPEC §4.3)", () => {
  const newestFirst = () => ["db", "emile", "dave", "carol", "bob", "joann", "ann"];

  it("offset: a bare array newest first, or with include_totals {users, start, limit, length, total}", async () => {
    const all = (await (await api(tenant, "GET", "/users")).json()) as UserBody[];
    expect(all.map((u) => keysOf([u])[0])).toEqual(newestFirst());
    const page = (await (await api(tenant, "GET", "/users?page=1&per_page=3&include_totals=true")).json()) as Record<string, unknown>;
    expect(Object.keys(page).sort()).toEqual(["length", "limit", "start", "total", "users"]);
    expect(page).toMatchObject({ start: 3, limit: 3, length: 3, total: 7 });
    expect(keysOf(page.users as UserBody[])).toEqual(["bob", "carol", "joann"]);
    const last = (await (await api(tenant, "GET", "/users?page=2&per_page=3&include_totals=true")).json()) as Record<string, unknown>;
    expect(last).toMatchObject({ start: 6, limit: 3, length: 1, total: 7 });
    const searched = (await (await api(tenant, "GET", `/users?q=ann&include_totals=true`)).json()) as Record<string, unknown>;
    expect(searched).toMatchObject({ total: 2, length: 2 });
    expect((await api(tenant, "GET", "/users?per_page=101")).status).toBe(400);
  });

  it("checkpoint: {users, next} walks every primary user once, next absent on the last page, in either direction", async () => {
    for (const [sort, expected] of [["", newestFirst()], ["&sort=created_at:-1", newestFirst()], ["&sort=created_at:1", newestFirst().reverse()]] as const) {
      const seen: string[] = [];
      let from = "";
      for (let i = 0; i < 10; i++) {
        const res = await api(tenant, "GET", `/users?take=3&include_totals=true&page=5${sort}${from ? `&from=${from}` : ""}`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as { users: UserBody[]; next?: string };
        expect(Object.keys(body).every((k) => k === "users" || k === "next")).toBe(true);
        seen.push(...body.users.map((u) => keysOf([u])[0] as string));
        if (!body.next) break;
        from = body.next;
      }
      expect(seen, sort).toEqual(expected);
    }
  });

  it("a cursor replayed under another sort, a malformed cursor and any other sort column are 400", async () => {
    const first = (await (await api(tenant, "GET", "/users?take=2")).json()) as { next: string };
    expect((await failure(await api(tenant, "GET", `/users?take=2&sort=created_at:1&from=${first.next}`))).message).toMatch(/issued for sort "created_at:-1"/);
    expect((await api(tenant, "GET", "/users?take=2&from=not-a-cursor")).status).toBe(400);
    expect((await api(tenant, "GET", `/users?take=2&from=${btoa('{"v":1,"s":"created_at:-1","k":"x","i":"y"}')}`)).status).toBe(400);
    for (const sort of ["email:1", "name:-1", "created_at:2", "created_at"]) {
      expect((await failure(await api(tenant, "GET", `/users?take=2&sort=${sort}`))).message, sort).toMatch(/Unsupported sort/);
      expect((await api(tenant, "GET", `/users?sort=${sort}`)).status, sort).toBe(400);
    }
  });

  it("a checkpoint search pages through the matches only", async () => {
    const res = (await (await api(tenant, "GET", `/users?q=${encodeURIComponent("example.com")}&take=2`)).json()) as { users: UserBody[]; next: string };
    const rest = (await (await api(tenant, "GET", `/users?q=${encodeURIComponent("example.com")}&take=2&from=${res.next}`)).json()) as { users: UserBody[]; next?: string };
    expect([...keysOf(res.users), ...keysOf(rest.users)].sort()).toEqual(["ann", "dave", "emile", "joann"]);
    expect(rest.next).toBeUndefined();
  });
});
