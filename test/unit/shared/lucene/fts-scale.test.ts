import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { type LuceneSqlConfig, luceneToSql } from "../../../../src/shared/lucene";

/**
 * Issue 9: substring search must stay fast at 100,000 users. With `bareFts` over a trigram FTS5 table the
 * compiled clause is answered from the index (query plan shows the virtual-table index, not a scan of
 * the users table), and stays correct.
 */
const config: LuceneSqlConfig = {
  fields: {
    email: { kind: "email", column: "email" },
    name: { kind: "text", column: "name" },
    user_id: { kind: "exact", column: "user_id" },
  },
  bareFields: ["email", "name", "user_id"],
  bareFts: "rowid IN (SELECT rowid FROM _q_big_fts WHERE _q_big_fts MATCH ?)",
};

it("answers a 3+ character substring from the trigram index over 100,000 users", async () => {
  const out = await runInDurableObject(env.TENANT.getByName("lucene-scale"), (_o, state) => {
    const sql = state.storage.sql;
    sql.exec("DROP TABLE IF EXISTS _q_big");
    sql.exec("DROP TABLE IF EXISTS _q_big_fts");
    sql.exec("CREATE TABLE _q_big (user_id TEXT UNIQUE, email TEXT, name TEXT)");
    sql.exec("CREATE VIRTUAL TABLE _q_big_fts USING fts5(email, name, user_id, content='_q_big', tokenize='trigram')");
    sql.exec(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
       INSERT INTO _q_big (user_id, email, name) SELECT 'auth0|' || i, 'user' || i || '@example.com', 'Name ' || i FROM n`,
    );
    sql.exec("INSERT INTO _q_big_fts (_q_big_fts) VALUES ('rebuild')");
    const filter = luceneToSql("ser9999", config);
    if (!filter) throw new Error("expected a filter");
    const plan = sql
      .exec(`EXPLAIN QUERY PLAN SELECT user_id FROM _q_big WHERE ${filter.where}`, ...filter.params)
      .toArray()
      .map((r) => String(r.detail));
    const t0 = Date.now();
    const rows = sql.exec(`SELECT user_id FROM _q_big WHERE ${filter.where} ORDER BY user_id`, ...filter.params).toArray();
    const ms = Date.now() - t0;
    return { plan, ids: rows.map((r) => String(r.user_id)), ms };
  });
  expect(out.ids).toEqual(["auth0|99990", "auth0|99991", "auth0|99992", "auth0|99993", "auth0|99994", "auth0|99995", "auth0|99996", "auth0|99997", "auth0|99998", "auth0|99999", "auth0|9999"].sort());
  expect(out.plan.join("\n")).toMatch(/VIRTUAL TABLE INDEX/);
  expect(out.plan.join("\n")).not.toMatch(/^SCAN _q_big$/m);
}, 120_000);
