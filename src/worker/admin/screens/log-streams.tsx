import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { stepUpRequired } from "../login";
import { Csrf } from "../pages/layout";
import { type Outcome, outcomeOf, readStatus, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, str, tenantPath } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

interface LogStream {
  id: string;
  name: string;
  type: string;
  status: string;
  sink?: { httpEndpoint?: string; httpContentType?: string; httpContentFormat?: string };
}

/** What the create form keeps of a refused submission: everything but the authorization header. */
interface Typed {
  name: string;
  httpEndpoint: string;
  httpContentType: string;
  httpContentFormat: string;
}

const FORMATS = [
  ["JSONARRAY", "JSON array (a batch per request)"],
  ["JSONLINES", "JSON lines"],
  ["JSONOBJECT", "JSON object (one event per request)"],
] as const;
const CONTENT_TYPES = ["application/json", "application/x-ndjson", "text/plain"] as const;
const idOf = (c: ConsoleContext) => encodeURIComponent(c.req.param("id") as string);

/**
 * GET /admin/t/:tenant/log-streams: the tenant's log streams (GET /log-streams), the form that creates an
 * http one (POST /log-streams) and a delete link to a confirmation page. The authorization header is sent
 * to the API (which seals it) and never printed back: not in a field, not in "Show the API call".
 */
export async function logStreamsScreen(c: ConsoleContext, outcome: Outcome & { typed?: Typed } = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const list = await c.var.api.get<LogStream[]>(tenant, "/log-streams");
  const base = tenantPath(tenant, "/log-streams");
  const mayDelete = can(c, "delete:log_streams");
  const typed = outcome.typed;
  return sendConsolePage(
    c,
    shellOf(c, "Log streams", { tenant, section: "log-streams" }),
    <>
      <h1>Log streams</h1>
      <p class="muted">Each stream receives the tenant's log events over HTTP as they are written, with retries.</p>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? list.error} />
      <DataTable
        caption={`Log streams of ${tenant} (credentials are never shown)`}
        rows={list.ok && Array.isArray(list.body) ? list.body : []}
        columns={[
          { label: "Name", cell: (l) => l.name },
          { label: "Status", cell: (l) => l.status },
          { label: "Endpoint", cell: (l) => <code>{l.sink?.httpEndpoint ?? ""}</code> },
          { label: "Content", cell: (l) => `${l.sink?.httpContentType ?? ""}, ${l.sink?.httpContentFormat ?? ""}` },
          ...(mayDelete
            ? [{ label: "Delete", cell: (l: LogStream) => <a href={`${base}/${encodeURIComponent(l.id)}/delete`} aria-label={`Delete log stream ${l.name}`}>Delete…</a> }]
            : []),
        ]}
        empty="No log stream."
      />
      {can(c, "create:log_streams") ? (
        <>
          <h2>Add an HTTP log stream</h2>
          <form method="post" action={base} class="card" autocomplete="off">
            <Csrf token={c.var.operator.csrf} />
            <Field name="name" label="Name" value={typed?.name} hint="Generated when empty." />
            <Field name="httpEndpoint" label="Endpoint URL" type="url" value={typed?.httpEndpoint} required hint="Gatehouse POSTs the log events here." />
            <div class="field">
              <label for="f-httpContentType">Content type</label>
              <select id="f-httpContentType" name="httpContentType">
                {CONTENT_TYPES.map((t) => (
                  <option value={t} selected={typed?.httpContentType === t}>
                    {t}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="f-httpContentFormat">Format</label>
              <select id="f-httpContentFormat" name="httpContentFormat">
                {FORMATS.map(([value, label]) => (
                  <option value={value} selected={typed?.httpContentFormat === value}>
                    {label}
                  </option>
                ))}
              </select>
            </div>
            <Field
              name="httpAuthorization"
              label="Authorization header"
              type="password"
              hint="Sent as the Authorization header of each request, for example Bearer <token>. Stored encrypted and never shown again; leave empty for none."
            />
            <button type="submit">Add log stream</button>
          </form>
        </>
      ) : null}
    </>,
    outcome.status ?? readStatus(list),
  );
}

/** POST .../log-streams: POST /log-streams {name?, type: http, sink}; a refusal keeps the typed fields but the header. */
export async function createLogStream(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const typed: Typed = {
    name: str(form.name).trim(),
    httpEndpoint: str(form.httpEndpoint).trim(),
    httpContentType: str(form.httpContentType),
    httpContentFormat: str(form.httpContentFormat),
  };
  const authorization = str(form.httpAuthorization);
  const body = {
    ...(typed.name ? { name: typed.name } : {}),
    type: "http",
    sink: {
      httpEndpoint: typed.httpEndpoint,
      ...(typed.httpContentType ? { httpContentType: typed.httpContentType } : {}),
      ...(typed.httpContentFormat ? { httpContentFormat: typed.httpContentFormat } : {}),
      ...(authorization ? { httpAuthorization: authorization } : {}),
    },
  };
  const created = await c.var.api.post<LogStream>(tenantOf(c), "/log-streams", body);
  if (!created.ok) return logStreamsScreen(c, { error: created.error, status: statusOf(created.status), typed });
  return logStreamsScreen(c, { notice: `Log stream ${created.body.name} added.`, status: 201 });
}

/** GET .../log-streams/:id/delete: the confirmation (GET /log-streams/{id}); the button only for delete:log_streams. */
export async function confirmDeleteLogStream(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const read = await c.var.api.get<LogStream>(tenant, `/log-streams/${idOf(c)}`);
  const base = tenantPath(tenant, "/log-streams");
  return sendConsolePage(
    c,
    shellOf(c, "Delete a log stream", { tenant, section: "log-streams" }),
    <>
      <p>
        <a href={base}>All log streams</a>
      </p>
      <h1>Delete a log stream</h1>
      <ApiError message={read.error} />
      {read.ok ? (
        <div class="card">
          <p>
            Delete the log stream <strong>{read.body.name}</strong>, which sends to <code>{read.body.sink?.httpEndpoint ?? ""}</code>? Log events stop
            reaching it at once; this cannot be undone.
          </p>
          {can(c, "delete:log_streams") ? (
            <form method="post" action={`${base}/${idOf(c)}/delete`} class="row">
              <Csrf token={c.var.operator.csrf} />
              <button type="submit" class="danger">
                Delete log stream
              </button>
              <a href={base}>Cancel</a>
            </form>
          ) : (
            <p class="muted">Your role cannot delete log streams.</p>
          )}
        </div>
      ) : null}
    </>,
    readStatus(read),
  );
}

/** POST .../log-streams/:id/delete: DELETE /log-streams/{id}, after a recent login (it stops the tenant's audit trail). */
export async function deleteLogStream(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const stepUp = stepUpRequired(c, tenantPath(tenant, `/log-streams/${idOf(c)}/delete`));
  if (stepUp) return stepUp;
  return logStreamsScreen(c, outcomeOf(await c.var.api.delete(tenant, `/log-streams/${idOf(c)}`), "Log stream deleted."));
}
