import { ManagementError } from "../errors";

/** Filters a `q` on /logs can express. */
export interface LogQuery {
  type?: string[];
  user_id?: string;
  client_id?: string;
  from_date?: number;
  to_date?: number;
}

const bad = (message: string) => new ManagementError(400, `Invalid q: ${message}`, "invalid_query_string");

const CLAUSE = /\s*(?:AND\s+)?([a-z_]+):("(?:[^"\\]|\\.)*"|\([^)]*\)|\[[^\]]*\]|[^\s()[\]"]+)\s*/y;

const unquote = (value: string) => (value.startsWith('"') ? (JSON.parse(value) as string) : value);

function parseDate(value: string, end: boolean): number | undefined {
  if (value === "*") return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw bad(`"${value}" is not a date`);
  // A bare day as upper bound covers that whole day.
  return end && /^\d{4}-\d{2}-\d{2}$/.test(value) ? ms + 86_399_999 : ms;
}

/**
 * The subset of the reference platform's Lucene syntax that /logs supports: `type:fp`,
 * `type:(fp OR fu)`, `user_id:"auth0|abc"`, `client_id:xyz` and `date:[2026-01-01 TO 2026-01-31]` (either
 * bound may be `*`), joined by spaces or AND. Anything else is a 400 naming the problem.
 */
export function parseLogQuery(q: string | undefined): LogQuery {
  const out: LogQuery = {};
  if (q === undefined || !q.trim()) return out;
  if (q.length > 1000) throw bad("too long");
  CLAUSE.lastIndex = 0;
  let position = 0;
  while (position < q.length) {
    CLAUSE.lastIndex = position;
    const match = CLAUSE.exec(q);
    if (!match) throw bad(`cannot read "${q.slice(position, position + 30)}"`);
    position = CLAUSE.lastIndex;
    const field = match[1] as string;
    const value = match[2] as string;
    if (field === "type") {
      const types = value.startsWith("(") ? value.slice(1, -1).split(/\s+OR\s+/) : [value];
      const cleaned = types.map((t) => unquote(t.trim())).filter(Boolean);
      if (!cleaned.length || cleaned.some((t) => !/^[a-z_]{1,16}$/.test(t))) throw bad("type must be log type codes");
      out.type = cleaned;
    } else if (field === "user_id" || field === "client_id") {
      if (value.startsWith("(") || value.startsWith("[")) throw bad(`${field} takes one value`);
      out[field] = unquote(value);
    } else if (field === "date") {
      const range = /^\[\s*(\S+)\s+TO\s+(\S+)\s*\]$/.exec(value);
      if (!range) throw bad("date takes a range [from TO to]");
      const from = parseDate(range[1] as string, false);
      const to = parseDate(range[2] as string, true);
      if (from !== undefined) out.from_date = from;
      if (to !== undefined) out.to_date = to;
    } else {
      throw bad(`unsupported field "${field}" (supported: type, user_id, client_id, date)`);
    }
  }
  return out;
}
