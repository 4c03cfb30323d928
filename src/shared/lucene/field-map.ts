/**
 * The caller-supplied field allowlist of the `q` language (issue 9 point 2: "`field:value` on an
 * allowlist"). Column names reach SQL only from here, never from the query.
 */
import { LuceneError } from "./ast";
import { clip } from "./values";

/**
 * How a field matches:
 * - `text`: case-insensitive (ASCII) equality / prefix, e.g. name, nickname, given_name.
 * - `email`: the value is trimmed and lower-cased, then compared to the already lower-cased column.
 * - `exact`: case-sensitive equality / prefix, e.g. user_id, connection, phone_number.
 * - `boolean`: `true` / `false` against a 0/1 column.
 * - `date`: integer epoch-ms column; ISO dates or epoch ms; ranges.
 * - `integer`: integer column; ranges.
 * - `json`: a JSON text column addressed as `field.path.parts` (app_metadata, user_metadata).
 */
export type FieldKind = "text" | "email" | "exact" | "boolean" | "date" | "integer" | "json";

/** One allowed field. */
export interface FieldSpec {
  kind: FieldKind;
  /** Trusted column name (`name` or `table.name`), checked against an identifier pattern. */
  column: string;
  /**
   * Optional indexed substring search for bare terms: SQL with exactly one `?`, bound to an FTS5
   * phrase (`"term"`, inner quotes doubled), e.g.
   * `user_id IN (SELECT user_id FROM users_fts WHERE users_fts MATCH ('{name} : ' || ?))`.
   * Used only for terms of at least 3 characters, because a trigram index cannot match shorter ones.
   */
  fts?: string;
  /**
   * The field lives in another table (e.g. identities): the condition on `column` becomes
   * `outer IN (SELECT inner FROM table WHERE <condition>)`.
   */
  via?: { outer: string; table: string; inner: string };
}

/** Compiler configuration. */
export interface LuceneSqlConfig {
  /** Allowed fields by query name (`email`, `identities.connection`, `app_metadata` ...). */
  fields: Readonly<Record<string, FieldSpec>>;
  /** Fields a bare term searches as a substring (SPEC §4.2: "partial terms are substring matches"). */
  bareFields: readonly string[];
  /** The field a bare complete email address is compared to for equality. Default `email`. */
  emailField?: string;
  /**
   * Optional single FTS expression (one `?`, bound to an FTS5 phrase) used for bare terms of 3+
   * characters instead of one condition per bare field; e.g. over a trigram table covering email,
   * name, nickname and user_id: `user_id IN (SELECT user_id FROM users_fts WHERE users_fts MATCH ?)`.
   */
  bareFts?: string;
}

/** A field resolved for one query: its spec plus the JSON path segments, if any. */
export interface ResolvedField {
  name: string;
  spec: FieldSpec;
  path: string[];
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$/;
/** JSON path segment: no quote, backslash, dot, bracket or control char, so `$."a"."b"` stays well formed. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const SEGMENT = /^[^"\\.[\]\u0000-\u001f\u007f]{1,64}$/;
const MAX_SEGMENTS = 8;

/** Checks a config once; a bad config is a programming error (TypeError), not a 400. */
export function validateConfig(config: LuceneSqlConfig): void {
  for (const [name, spec] of Object.entries(config.fields)) {
    const idents = [spec.column, ...(spec.via ? [spec.via.outer, spec.via.table, spec.via.inner] : [])];
    for (const id of idents) {
      if (!IDENT.test(id)) throw new TypeError(`lucene field map: '${name}' has an invalid identifier '${id}'`);
    }
    if (spec.fts !== undefined) checkFts(spec.fts, name);
  }
  if (config.bareFts !== undefined) checkFts(config.bareFts, "bareFts");
  for (const f of [...config.bareFields, config.emailField ?? "email"]) {
    const spec = Object.hasOwn(config.fields, f) ? config.fields[f] : undefined;
    if (!spec || !["text", "email", "exact"].includes(spec.kind)) {
      throw new TypeError(`lucene field map: bare-term field '${f}' must be a text, email or exact field`);
    }
  }
}

function checkFts(sql: string, name: string): void {
  if (sql.split("?").length !== 2) throw new TypeError(`lucene field map: fts of '${name}' must contain exactly one '?'`);
}

/**
 * Resolves a query field name against the allowlist. Own properties only, so `__proto__` or
 * `constructor` can never resolve to an inherited object member.
 */
export function resolveField(config: LuceneSqlConfig, name: string): ResolvedField {
  if (Object.hasOwn(config.fields, name)) {
    const spec = config.fields[name] as FieldSpec;
    return { name, spec, path: [] };
  }
  const dot = name.indexOf(".");
  const head = dot > 0 ? name.slice(0, dot) : "";
  const spec = head && Object.hasOwn(config.fields, head) ? config.fields[head] : undefined;
  if (spec?.kind !== "json") {
    throw new LuceneError("unknown_field", `unknown field '${clip(name)}'`);
  }
  const path = name.slice(dot + 1).split(".");
  if (path.length > MAX_SEGMENTS || !path.every((s) => SEGMENT.test(s))) {
    throw new LuceneError("invalid_value", `invalid metadata path '${clip(name)}'`);
  }
  return { name, spec, path };
}

/** Builds the JSON path `$."a"."b"` from validated segments; it is bound as a parameter, not inlined. */
export function jsonPath(path: string[]): string {
  return `$${path.map((s) => `."${s}"`).join("")}`;
}
