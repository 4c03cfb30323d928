import { now } from "../../../shared/clock";
import type { ApiResult } from "../api";
import type { ConsoleContext } from "../context";
import { ApiError, tenantPath, when } from "./parts";

/**
 * Change history of one resource (issue 30 "who changed what and when, with the diff"): the management writes
 * the tenant's audit log holds for it. Every management write records a `sapi` event whose details name the
 * target (`target.id`), the actor, the request (method, path, redacted body) and, for updates, the diff; the
 * console reads them back through GET /logs with `q=type:sapi AND details.target.id:"<id>"`.
 */

interface Actor {
  type?: string;
  id?: string | null;
  client_id?: string | null;
}
interface Change {
  log_id: string;
  date: string;
  description?: string | null;
  details?: {
    event_type?: string;
    actor?: Actor;
    target?: { type?: string; id?: string; diff?: Record<string, { before: unknown; after: unknown }> };
    request?: { method?: string; path?: string; body?: unknown };
  };
}

/** How many changes a resource's page shows (newest first); the logs screen has the rest. */
export const HISTORY_SIZE = 10;

/** A Lucene phrase: the value quoted, quotes and backslashes escaped. */
const phrase = (value: string) => `"${value.replace(/[\\"]/g, (m) => `\\${m}`)}"`;

/**
 * How far back a page looks. The logs table has no index on the target, so the search walks the date index
 * newest first (cheap `type` test before the JSON path) until it has its changes or reaches this bound.
 * @default 90 days
 */
export const HISTORY_DAYS = 90;
const DAY_MS = 86_400_000;

/** The `q` that finds the management writes on one resource since a day (YYYY-MM-DD). */
export const historyQuery = (targetId: string, since: string) => `type:sapi AND date:[${since} TO *] AND details.target.id:${phrase(targetId)}`;

/** Reads the last changes of a resource (checkpoint paging: no count over the whole log). */
export function loadHistory(c: ConsoleContext, tenant: string, targetId: string): Promise<ApiResult> {
  const since = new Date(now() - HISTORY_DAYS * DAY_MS).toISOString().slice(0, 10);
  return c.var.api.get(tenant, "/logs", { q: historyQuery(targetId, since), take: HISTORY_SIZE, sort: "date:-1" });
}

const MAX_VALUE = 300;
/** A value as compact JSON, cut to a readable length. */
function shown(value: unknown): string {
  const text = value === undefined ? "" : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text;
}

function who(actor: Actor | undefined): string {
  if (!actor?.id) return actor?.type ?? "unknown";
  if (actor.type === "client") return `application ${actor.client_id ?? actor.id}`;
  return actor.client_id ? `${actor.id} (via ${actor.client_id})` : actor.id;
}

/** What changed: the diff of an update, else the request body the API was sent. */
function What(props: { change: Change }) {
  const details = props.change.details ?? {};
  const diff = Object.entries(details.target?.diff ?? {});
  if (diff.length) {
    return (
      <table>
        <caption class="muted">Fields changed</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {diff.map(([field, d]) => (
            <tr>
              <th scope="row">
                <code>{field}</code>
              </th>
              <td>
                <code>{shown(d.before)}</code>
              </td>
              <td>
                <code>{shown(d.after)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  const body = details.request?.body;
  return body !== undefined && body !== null ? <pre>{shown(body)}</pre> : <span class="muted">No field listed.</span>;
}

/** The "Change history" section of a resource's page. */
export function ChangeHistory(props: { tenant: string; result: ApiResult }) {
  const body = props.result.body as unknown;
  const changes: Change[] = Array.isArray(body) ? body : Array.isArray((body as { logs?: unknown })?.logs) ? (body as { logs: Change[] }).logs : [];
  return (
    <section aria-labelledby="h-history">
      <h2 id="h-history">Change history</h2>
      <p class="muted">The last {HISTORY_SIZE} management changes of the last {HISTORY_DAYS} days, newest first, from the audit log.</p>
      <ApiError message={props.result.error} />
      {props.result.ok && !changes.length ? <p class="muted">No change in the last {HISTORY_DAYS} days.</p> : null}
      {changes.length ? (
        <ol class="history">
          {changes.map((change) => (
            <li class="card">
              <p>
                <a href={tenantPath(props.tenant, `/logs/${encodeURIComponent(change.log_id)}`)}>{when(change.date)}</a> · <strong>{change.details?.event_type ?? change.description ?? ""}</strong> by{" "}
                <code>{who(change.details?.actor)}</code>
                {change.details?.request?.method ? (
                  <span class="muted">
                    {" "}
                    · {change.details.request.method} {change.details.request.path ?? ""}
                  </span>
                ) : null}
              </p>
              <What change={change} />
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
