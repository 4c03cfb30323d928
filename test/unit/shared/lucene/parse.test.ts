import { describe, expect, it } from "vitest";
import { LuceneError, type LuceneNode, parseLucene } from "../../../../src/shared/lucene";

const t = (value: string, field: string | null = null, extra: Partial<{ phrase: boolean; prefix: boolean }> = {}): LuceneNode => ({
  kind: "term",
  field,
  value,
  phrase: extra.phrase ?? false,
  prefix: extra.prefix ?? false,
});
const and = (...children: LuceneNode[]): LuceneNode => ({ kind: "and", children });
const or = (...children: LuceneNode[]): LuceneNode => ({ kind: "or", children });
const not = (child: LuceneNode): LuceneNode => ({ kind: "not", child });

describe("lucene parser (SPEC §4.2 search rules)", () => {
  const cases: [string, LuceneNode | null][] = [
    ["", null],
    ["   \t\n ", null],
    ["alice", t("alice")],
    ["name:alice", t("alice", "name")],
    ["name: alice", t("alice", "name")],
    ['name:"Alice Smith"', t("Alice Smith", "name", { phrase: true })],
    ['"bob OR builder"', t("bob OR builder", null, { phrase: true })],
    ['"a AND (b"', t("a AND (b", null, { phrase: true })],
    ['"say \\"hi\\" OR not"', t('say "hi" OR not', null, { phrase: true })],
    ['name:"x\\"y"', t('x"y', "name", { phrase: true })],
    ["a\\ b", t("a b")],
    ["a\\:b", t("a:b")],
    ["\\AND", t("AND")],
    ["and", t("and")],
    ["a b OR c", or(and(t("a"), t("b")), t("c"))],
    ["a OR b c", or(t("a"), and(t("b"), t("c")))],
    ["a AND b OR c AND d", or(and(t("a"), t("b")), and(t("c"), t("d")))],
    ["a && b || c", or(and(t("a"), t("b")), t("c"))],
    ["a (b OR c)", and(t("a"), or(t("b"), t("c")))],
    ["NOT a", not(t("a"))],
    ["-a b", and(not(t("a")), t("b"))],
    ["a NOT b", and(t("a"), not(t("b")))],
    ["-(a OR b)", not(or(t("a"), t("b")))],
    ['-"x y"', not(t("x y", null, { phrase: true }))],
    ["!a", not(t("a"))],
    ["+a", t("a")],
    ["foo-bar", t("foo-bar")],
    ["jo*", t("jo", null, { prefix: true })],
    ["name:jo*", t("jo", "name", { prefix: true })],
    ["jo\\*", t("jo*")],
    ["_exists_:app_metadata.plan", { kind: "exists", field: "app_metadata.plan" }],
    ["name:*", { kind: "exists", field: "name" }],
    ["created_at:[* TO *]", { kind: "exists", field: "created_at" }],
    [
      "created_at:[2024-01-01 TO 2024-02-01}",
      { kind: "range", field: "created_at", lower: "2024-01-01", upper: "2024-02-01", includeLower: true, includeUpper: false },
    ],
    [
      "logins_count:{10 TO *]",
      { kind: "range", field: "logins_count", lower: "10", upper: null, includeLower: false, includeUpper: true },
    ],
    ["last_login:2024-01-01T10:00:00Z", t("2024-01-01T10:00:00Z", "last_login")],
    ["app_metadata.plan:pro", t("pro", "app_metadata.plan")],
    ["((a))", t("a")],
  ];
  it.each(cases)("parses %j", (q, expected) => {
    expect(parseLucene(q)).toEqual(expected);
  });

  const errors: [string, string, RegExp][] = [
    ['"open', "syntax", /unbalanced quote/],
    ['name:"open', "syntax", /unbalanced quote/],
    ['"ends with escaped quote\\"', "syntax", /unbalanced quote/],
    ["(a", "syntax", /'\(' is not closed/],
    ["a)", "syntax", /unexpected '\)'/],
    ["()", "syntax", /empty group/],
    ["a AND", "syntax", /dangling AND/],
    ["OR a", "syntax", /dangling OR/],
    ["a OR", "syntax", /dangling OR/],
    ["a AND OR b", "syntax", /dangling AND/],
    ["NOT", "syntax", /dangling NOT/],
    ["a -", "syntax", /dangling '-'/],
    ["name:", "syntax", /missing value after 'name:'/],
    ["name:   ", "syntax", /missing value after 'name:'/],
    ["(name: )", "syntax", /missing value after 'name:'/],
    [":x", "syntax", /missing field name/],
    ["name:(a b)", "syntax", /grouping/],
    ["*", "syntax", /lone '\*'/],
    ["a*b", "syntax", /wildcard/],
    ["*ab", "syntax", /wildcard/],
    ["trailing\\", "syntax", /dangling backslash/],
    ["ab\"cd", "syntax", /unexpected quote/],
    ['"x"~2', "syntax", /proximity/],
    ["created_at:[2024 TO", "syntax", /unbalanced range/],
    ["created_at:[2024 2025]", "syntax", /from TO to/],
    ["_exists_:\"x\"", "syntax", /_exists_/],
    ["a\u0000b", "invalid_character", /NUL/],
    ["a\uD800b", "invalid_character", /lone surrogate/],
    ["a\uDC00", "invalid_character", /lone surrogate/],
    ["a\u0007", "invalid_character", /control/],
    [" \u0000 ", "invalid_character", /NUL/],
    ["x".repeat(2049), "too_long", /2048 bytes/],
    ["é".repeat(1025), "too_long", /2048 bytes/],
    ["a".repeat(10 * 1024), "too_long", /2048 bytes/],
    [`${"(".repeat(11)}a${")".repeat(11)}`, "too_deep", /nesting/],
    [`${"(".repeat(500)}a${")".repeat(500)}`, "too_deep", /nesting/],
    [`${"NOT ".repeat(11)}a`, "too_deep", /nesting/],
    [Array.from({ length: 65 }, (_, i) => `t${i}`).join(" "), "too_complex", /clauses/],
  ];
  it.each(errors)("rejects %j as %s", (q, code, message) => {
    let caught: unknown;
    try {
      parseLucene(q);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(LuceneError);
    expect((caught as LuceneError).code).toBe(code);
    expect((caught as LuceneError).message).toMatch(message);
    expect((caught as LuceneError).status).toBe(400);
  });

  it("accepts a well-formed surrogate pair and 10 levels of nesting", () => {
    expect(parseLucene("😀")).toEqual(t("😀"));
    expect(parseLucene(`${"(".repeat(10)}a${")".repeat(10)}`)).toEqual(t("a"));
  });
});
