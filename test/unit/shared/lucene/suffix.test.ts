import { describe, expect, it } from "vitest";
import { LuceneError, type LuceneSqlConfig, luceneToSql, parseLucene } from "../../../../src/shared/lucene";

/** The reference platform's suffix wildcards on field values (`name:*usa`, `email:*@corp.com`). */
const config: LuceneSqlConfig = {
  fields: {
    email: { kind: "email", column: "email" },
    name: { kind: "text", column: "name" },
    user_id: { kind: "exact", column: "user_id" },
    blocked: { kind: "boolean", column: "blocked" },
    app_metadata: { kind: "json", column: "app_metadata" },
  },
  bareFields: ["email", "name", "user_id"],
};

describe("leading wildcards on field values", () => {
  it("parse to a term marked suffix (with prefix too for *abc*)", () => {
    expect(parseLucene("name:*usa")).toEqual({ kind: "term", field: "name", value: "usa", phrase: false, prefix: false, suffix: true });
    expect(parseLucene("name:*usa*")).toEqual({ kind: "term", field: "name", value: "usa", phrase: false, prefix: true, suffix: true });
    expect(parseLucene("name:usa")).not.toHaveProperty("suffix");
  });

  it.each([
    ["name:*USA", "(substr(lower(name), ?) = ?)", [-3, "usa"]],
    ["name:*usa*", "(instr(lower(name), ?) > 0)", ["usa"]],
    ["email:*@Corp.com", "(substr(email, ?) = ?)", [-9, "@corp.com"]],
    ["user_id:*|42", "(substr(user_id, ?) = ?)", [-3, "|42"]],
    ["user_id:*😀ab", "(substr(user_id, ?) = ?)", [-3, "😀ab"]],
  ])("%j compiles to an ends-with / contains test with bound values", (q, where, params) => {
    expect(luceneToSql(q, config)).toEqual({ where, params });
  });

  it.each([
    ["name:*ab", /at least 3 characters/],
    ["blocked:*rue", /wildcards are not supported/],
    ["app_metadata.plan:*pro", /wildcards are not supported/],
    ["*abc", /wildcard/],
    ["name:* ", /./],
  ])("%j is a 400", (q, message) => {
    let caught: unknown;
    try {
      luceneToSql(q, config);
    } catch (error) {
      caught = error;
    }
    if (q === "name:* ") {
      // `name:*` alone means "has a name" (exists), not a wildcard term.
      expect(caught).toBeUndefined();
      return;
    }
    expect(caught).toBeInstanceOf(LuceneError);
    expect((caught as LuceneError).message).toMatch(message);
  });
});
