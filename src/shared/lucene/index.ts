/**
 * The `q` search language of `GET /api/v2/users` (SPEC §4.2 "Search rules", issue 9 point 2): a
 * Lucene-syntax parser to an AST and a compiler to a SQLite WHERE clause with bound parameters.
 */
import type { LuceneSqlConfig } from "./field-map";
import { compileLucene, type SqlFilter } from "./compile";
import { parseLucene } from "./parse";

export * from "./ast";
export { compileLucene, FTS_MIN_LENGTH, ftsPhrase, type SqlFilter, type SqlParam } from "./compile";
export type { FieldKind, FieldSpec, LuceneSqlConfig } from "./field-map";
export { parseLucene } from "./parse";

/**
 * Parses and compiles `q` in one step.
 *
 * @example
 * const filter = luceneToSql(c.req.query("q"), USERS_SEARCH); // USERS_SEARCH: a LuceneSqlConfig
 * const where = filter ? `WHERE ${filter.where}` : "";
 * sql.exec(`SELECT * FROM users ${where} ORDER BY created_at LIMIT ?`, ...(filter?.params ?? []), limit);
 * Returns null when `q` is absent, empty or whitespace ("no
 * filter": list everything); throws {@link LuceneError} (a 400 management error) for a bad query.
 */
export function luceneToSql(q: string | null | undefined, config: LuceneSqlConfig): SqlFilter | null {
  if (q === null || q === undefined) return null;
  const ast = parseLucene(q);
  return ast === null ? null : compileLucene(ast, config);
}
