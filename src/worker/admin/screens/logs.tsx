import type { ConsoleContext } from "../context";
import { ApiError, Pager, pageOf, tenantPath, when } from "../pages/parts";
import { type Column, DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

/** A log event as GET /logs answers it. */
export interface LogEntry {
  log_id: string;
  date: string;
  type: string;
  description?: string | null;
  client_id?: string | null;
  user_id?: string | null;
  ip?: string | null;
  user_agent?: string | null;
  details?: Record<string, unknown>;
}

const PER_PAGE = 50;

/** The log types the filter offers (the reference platform's codes that Gatehouse writes). */
const TYPES: [string, string][] = [
  ["s", "Successful login"],
  ["f", "Failed login"],
  ["fp", "Failed login (wrong password)"],
  ["fu", "Failed login (unknown user)"],
  ["ss", "Successful sign-up"],
  ["fs", "Failed sign-up"],
  ["slo", "Logout"],
  ["seacft", "Code exchanged for tokens"],
  ["feacft", "Failed code exchange"],
  ["seccft", "Client credentials exchange"],
  ["feccft", "Failed client credentials exchange"],
  ["sapi", "Management API operation"],
  ["fapi", "Failed management API operation"],
  ["w", "Warning"],
];

/** The filter fields of the logs screen, as the page's query names them. */
const FILTERS = ["type", "user_id", "client_id", "ip", "from", "to"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** A Lucene phrase: the value quoted, quotes and backslashes escaped, so nothing in it is syntax. */
const phrase = (value: string) => `"${value.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
const isDay = (value: string | undefined) => !!value && /^\d{4}-\d{2}-\d{2}$/.test(value);

/** The filters as the API's `q` (Lucene on type, user_id, client_id, ip and date), every value quoted. */
export function logQuery(f: Filters): string {
  const terms: string[] = [];
  for (const field of ["type", "user_id", "client_id", "ip"] as const) {
    const value = f[field]?.trim();
    if (value) terms.push(`${field}:${phrase(value)}`);
  }
  if (isDay(f.from) || isDay(f.to)) terms.push(`date:[${isDay(f.from) ? f.from : "*"} TO ${isDay(f.to) ? f.to : "*"}]`);
  return terms.join(" AND ");
}

/** The columns of a log list; the date links to the entry's page, user and application to theirs. */
export function logColumns(tenant: string): Column<LogEntry>[] {
  return [
    { label: "Date", cell: (l) => <a href={tenantPath(tenant, `/logs/${encodeURIComponent(l.log_id)}`)}>{when(l.date)}</a> },
    { label: "Type", cell: (l) => <abbr title={TYPES.find(([code]) => code === l.type)?.[1] ?? l.type}>{l.type}</abbr> },
    { label: "Description", cell: (l) => l.description ?? "" },
    { label: "User", cell: (l) => (l.user_id ? <a href={tenantPath(tenant, `/users/${encodeURIComponent(l.user_id)}`)}>{l.user_id}</a> : "") },
    { label: "Application", cell: (l) => (l.client_id ? <a href={tenantPath(tenant, `/applications/${encodeURIComponent(l.client_id)}`)}>{l.client_id}</a> : "") },
    { label: "IP", cell: (l) => l.ip ?? "" },
  ];
}

/**
 * GET /admin/t/:tenant/logs: the tenant's logs newest first, filtered by type, user, client, IP and days
 * through the API's `q` (issue 30); `?user_id=` and `?client_id=` are the deep links from users and applications.
 */
export async function logsScreen(c: ConsoleContext): Promise<Response> {
  const tenant = c.req.param("tenant") as string;
  const page = pageOf(c.req.query("page"));
  const filters: Filters = {};
  for (const name of FILTERS) {
    const value = (c.req.query(name) ?? "").trim().slice(0, 300);
    if (value) filters[name] = value;
  }
  const q = logQuery(filters);
  const list = await c.var.api.get<{ logs: LogEntry[]; total: number }>(tenant, "/logs", { page, per_page: PER_PAGE, include_totals: true, sort: "date:-1", q });
  const logs = list.ok ? list.body.logs : [];
  const shell = shellOf(c, "Logs", { tenant, section: "logs" });
  const field = (name: keyof Filters, label: string, type = "text") => (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <input id={`f-${name}`} name={name} type={type} value={filters[name] ?? ""} />
    </div>
  );
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Logs</h1>
      <ApiError message={list.error} />
      <form method="get" action={tenantPath(tenant, "/logs")} class="card filters" aria-label="Filter the logs">
        <div class="field">
          <label for="f-type">Type</label>
          <select id="f-type" name="type">
            <option value="">Any type</option>
            {TYPES.map(([code, label]) => (
              <option value={code} selected={filters.type === code}>{`${code}: ${label}`}</option>
            ))}
          </select>
        </div>
        {field("user_id", "User ID")}
        {field("client_id", "Client ID")}
        {field("ip", "IP address")}
        {field("from", "From (UTC day)", "date")}
        {field("to", "To (UTC day)", "date")}
        <div class="field">
          <button type="submit" class="secondary">
            Filter
          </button>{" "}
          <a href={tenantPath(tenant, "/logs")}>Clear</a>
        </div>
      </form>
      {q ? (
        <p class="muted">
          Query: <code>{q}</code>
        </p>
      ) : null}
      <DataTable caption={list.ok ? `${list.body.total ?? logs.length} log events` : "Log events"} rows={logs} columns={logColumns(tenant)} empty="No log event matches." />
      {list.ok ? <Pager base={tenantPath(tenant, "/logs")} page={page} perPage={PER_PAGE} total={list.body.total ?? logs.length} extra={filters as Record<string, string>} /> : null}
    </>,
    list.ok || (list.status !== 403 && list.status !== 404) ? 200 : list.status,
  );
}

/** GET /admin/t/:tenant/logs/:id: one log event (GET /logs/{id}): its fields, links, and the raw details. */
export async function logScreen(c: ConsoleContext): Promise<Response> {
  const tenant = c.req.param("tenant") as string;
  const id = c.req.param("id") as string;
  const read = await c.var.api.get<LogEntry>(tenant, `/logs/${encodeURIComponent(id)}`);
  const log = read.ok ? read.body : null;
  const shell = shellOf(c, log ? `Log ${log.type}` : "Log event", { tenant, section: "logs" });
  const row = (label: string, value: unknown) => (
    <tr>
      <th scope="row">{label}</th>
      <td>{value as string}</td>
    </tr>
  );
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/logs")}>All logs</a>
      </p>
      <h1>{log ? `${log.type}: ${log.description ?? "log event"}` : "Log event"}</h1>
      <ApiError message={read.error} />
      {log ? (
        <>
          <table>
            <caption class="muted">Log event {log.log_id}</caption>
            <tbody>
              {row("Date", when(log.date))}
              {row("Type", `${log.type}${TYPES.find(([code]) => code === log.type) ? ` (${TYPES.find(([code]) => code === log.type)?.[1]})` : ""}`)}
              {row("Description", log.description ?? "")}
              {row(
                "User",
                log.user_id ? (
                  <>
                    <a href={tenantPath(tenant, `/users/${encodeURIComponent(log.user_id)}`)}>{log.user_id}</a> ·{" "}
                    <a href={tenantPath(tenant, `/logs?${new URLSearchParams({ user_id: log.user_id })}`)}>this user's logs</a>
                  </>
                ) : (
                  ""
                ),
              )}
              {row(
                "Application",
                log.client_id ? (
                  <>
                    <a href={tenantPath(tenant, `/applications/${encodeURIComponent(log.client_id)}`)}>{log.client_id}</a> ·{" "}
                    <a href={tenantPath(tenant, `/logs?${new URLSearchParams({ client_id: log.client_id })}`)}>this application's logs</a>
                  </>
                ) : (
                  ""
                ),
              )}
              {row("IP address", log.ip ? <a href={tenantPath(tenant, `/logs?${new URLSearchParams({ ip: log.ip })}`)}>{log.ip}</a> : "")}
              {row("User agent", log.user_agent ?? "")}
            </tbody>
          </table>
          <h2>Details</h2>
          <pre>{JSON.stringify(log.details ?? {}, null, 2)}</pre>
        </>
      ) : null}
    </>,
    read.ok ? 200 : read.status === 403 || read.status === 404 ? read.status : 400,
  );
}
