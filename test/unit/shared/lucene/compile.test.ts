import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { compileLucene, LuceneError, type LuceneSqlConfig, luceneToSql, parseLucene } from "../../../../src/shared/lucene";

const config: LuceneSqlConfig = {
  fields: {
    email: { kind: "email", column: "email" },
    name: { kind: "text", column: "name" },
    user_id: { kind: "exact", column: "user_id" },
    connection: { kind: "exact", column: "connection", via: { outer: "user_id", table: "_q_ids", inner: "user_id" } },
    blocked: { kind: "boolean", column: "blocked" },
    app_metadata: { kind: "json", column: "app_metadata" },
    created_at: { kind: "date", column: "created_at" },
    logins_count: { kind: "integer", column: "logins_count" },
  },
  bareFields: ["email", "name", "user_id"],
};

const placeholders = (where: string) => where.split("?").length - 1;

describe("lucene compiler: SQL text and parameters", () => {
  const cases: [string, string, unknown[]][] = [
    ["a@b.co", "(email = ?)", ["a@b.co"]],
    ["email: A@B.co", "(email = ?)", ["a@b.co"]],
    ['email:" A@B.co "', "(email = ?)", ["a@b.co"]],
    ["Ab", "((instr(lower(email), ?) > 0) OR (instr(lower(name), ?) > 0) OR (instr(lower(user_id), ?) > 0))", ["ab", "ab", "ab"]],
    ["name:Ab*", "(substr(lower(name), 1, ?) = ?)", [2, "ab"]],
    ["NOT blocked:true", "(NOT coalesce((blocked = ?), 0))", [1]],
    ["connection:x", "user_id IN (SELECT user_id FROM _q_ids WHERE connection = ?)", ["x"]],
    ["created_at:2024-01-01", "(created_at >= ? AND created_at < ?)", [Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 2)]],
    ["logins_count:{1 TO 3]", "(logins_count >= ? AND logins_count < ?)", [2, 4]],
    ["app_metadata.plan:pro", "(json_extract(app_metadata, ?) = ?)", ['$."plan"', "pro"]],
    ['app_metadata.a-b.__proto__:"1"', "(json_extract(app_metadata, ?) = ?)", ['$."a-b"."__proto__"', "1"]],
    ["_exists_:app_metadata.x", "(json_type(app_metadata, ?) IS NOT NULL)", ['$."x"']],
    ["a b OR c", "", []],
  ];
  it.each(cases)("%j compiles with only ? placeholders", (q, where, params) => {
    const out = luceneToSql(q, config);
    expect(out).not.toBeNull();
    if (!out) return;
    if (where) expect(out.where).toBe(where);
    if (params.length) expect(out.params).toEqual(params);
    expect(placeholders(out.where)).toBe(out.params.length);
  });

  it("keeps precedence in the SQL: a b OR c is (a AND b) OR c", () => {
    const out = luceneToSql("a b OR c", config);
    expect(out?.where).toMatch(/^\(\(\(.*\) AND \(.*\)\) OR \(.*\)\)$/);
  });

  const errors: [string, string, RegExp][] = [
    ["nope:x", "unknown_field", /unknown field 'nope'/],
    ["NAME:x", "unknown_field", /unknown field 'NAME'/],
    ["__proto__:x", "unknown_field", /unknown field '__proto__'/],
    ["constructor:x", "unknown_field", /unknown field 'constructor'/],
    ["hasOwnProperty:x", "unknown_field", /unknown field/],
    ["name.first:x", "unknown_field", /unknown field 'name.first'/],
    ["_exists_:nope", "unknown_field", /unknown field 'nope'/],
    ["_exists_:__proto__", "unknown_field", /unknown field/],
    ["nope:[1 TO 2]", "unknown_field", /unknown field/],
    ["app_metadata:x", "invalid_value", /needs a path/],
    ['app_metadata.a\\"b:x', "invalid_value", /invalid metadata path/],
    ["app_metadata.a\\\\b:x", "invalid_value", /invalid metadata path/],
    ["app_metadata..b:x", "invalid_value", /invalid metadata path/],
    ["app_metadata.a.:x", "invalid_value", /invalid metadata path/],
    ["app_metadata.a[0]:x", "invalid_value", /invalid metadata path/],
    [`app_metadata.${Array(9).fill("a").join(".")}:x`, "invalid_value", /invalid metadata path/],
    [`app_metadata.${"a".repeat(65)}:x`, "invalid_value", /invalid metadata path/],
    ["created_at:yesterday", "invalid_value", /ISO date/],
    ["created_at:2024-02-30", "invalid_value", /valid date/],
    ["created_at:[2024-01-01 TO soon]", "invalid_value", /ISO date/],
    ["created_at:2024*", "invalid_value", /wildcards/],
    ["logins_count:abc", "invalid_value", /integer/],
    ["logins_count:1.5", "invalid_value", /integer/],
    ["logins_count:[a TO 5]", "invalid_value", /integer/],
    ["name:[a TO b]", "invalid_value", /ranges are only supported/],
    ["blocked:yes", "invalid_value", /true or false/],
    ["blocked:tru*", "invalid_value", /wildcards/],
    ['""', "syntax", /empty phrase/],
    ['"   "', "syntax", /empty phrase/],
    ['email:"  "', "invalid_value", /empty value/],
  ];
  it.each(errors)("%j is a LuceneError (%s)", (q, code, message) => {
    let caught: unknown;
    try {
      luceneToSql(q, config);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(LuceneError);
    expect((caught as LuceneError).code).toBe(code);
    expect((caught as LuceneError).message).toMatch(message);
  });

  it("rejects a bad field map as a programming error, not a 400", () => {
    const ast = parseLucene("x");
    if (!ast) throw new Error("unreachable");
    const bad = (c: Partial<LuceneSqlConfig>) => () => compileLucene(ast, { ...config, ...c });
    expect(bad({ fields: { ...config.fields, name: { kind: "text", column: "name; DROP" } } })).toThrow(TypeError);
    expect(bad({ fields: { ...config.fields, connection: { kind: "exact", column: "c", via: { outer: "u", table: "t x", inner: "u" } } } })).toThrow(TypeError);
    expect(bad({ bareFts: "x MATCH ? OR ?" })).toThrow(TypeError);
    expect(bad({ bareFields: ["blocked"] })).toThrow(TypeError);
    expect(bad({ bareFields: ["nope"] })).toThrow(TypeError);
    expect(bad({ bareFields: ["__proto__"] })).toThrow(TypeError);
  });
});

describe("lucene fuzz: every input is either a LuceneError or SQL that SQLite accepts", () => {
  it("runs 1,500 random hostile queries through SQLite without a SQL error or an injected fragment", async () => {
    const atoms = ["a", "ab", "abc", "x@y.io", "'", '"', "\\", "(", ")", " ", " ", "OR", "AND", "NOT", "-", "*", ":", "[", "]", "{", "}",
      "TO", "name", "email", "blocked", "true", "app_metadata", ".", "plan", "created_at", "2024-01-01", "logins_count", "5",
      ";", "--", "/*", "%", "_", "DROP TABLE _q_f", "1=1", "__proto__", "constructor", "_exists_", "é", "😀", "\uD800", "\u0000"];
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const queries = Array.from({ length: 1500 }, () => Array.from({ length: 1 + rnd(12) }, () => atoms[rnd(atoms.length)]).join(""));
    const result = await runInDurableObject(env.TENANT.getByName("lucene-fuzz"), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec("CREATE TABLE IF NOT EXISTS _q_f (user_id TEXT, email TEXT, name TEXT, connection TEXT, blocked INTEGER, app_metadata TEXT, created_at INTEGER, logins_count INTEGER)");
      sql.exec("CREATE TABLE IF NOT EXISTS _q_ids (user_id TEXT, connection TEXT)");
      sql.exec("DELETE FROM _q_f");
      sql.exec("INSERT INTO _q_f VALUES ('u1', 'x@y.io', 'ab', 'c', 0, '{\"plan\":\"abc\"}', 1704067200000, 5)");
      let compiled = 0;
      let rejected = 0;
      const failures: string[] = [];
      for (const q of queries) {
        let filter: ReturnType<typeof luceneToSql>;
        try {
          filter = luceneToSql(q, config);
        } catch (e) {
          if (e instanceof LuceneError) rejected++;
          else failures.push(`${JSON.stringify(q)}: ${String(e)}`);
          continue;
        }
        if (!filter) continue;
        compiled++;
        const stripped = filter.where.replace(/'(text|true|false)'/g, "");
        if (/[;'%\\]|--|\/\*|DROP/.test(stripped)) failures.push(`${JSON.stringify(q)} leaked into SQL: ${filter.where}`);
        try {
          sql.exec(`SELECT count(*) FROM _q_f WHERE ${filter.where}`, ...filter.params).toArray();
        } catch (e) {
          failures.push(`${JSON.stringify(q)} -> ${filter.where}: ${String(e)}`);
        }
      }
      const left = sql.exec("SELECT count(*) AS n FROM _q_f").one().n;
      return { compiled, rejected, failures, left };
    });
    expect(result.failures).toEqual([]);
    expect(result.left).toBe(1);
    expect(result.compiled).toBeGreaterThan(100);
    expect(result.rejected).toBeGreaterThan(100);
  });
});
