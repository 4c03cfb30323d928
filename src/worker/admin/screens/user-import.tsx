import type { FC } from "hono/jsx";
import { IMPORT_FILE_MAX_BYTES } from "../../../shared/schemas/jobs";
import type { ApiResult } from "../api";
import type { ConsoleContext } from "../context";
import { Csrf } from "../pages/layout";
import { type Status, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Notice, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

/** A database connection the import form offers. */
export interface ImportConnection {
  id: string;
  name: string;
}

/** What the import form keeps of a refused submission (a browser never refills a file input). */
export interface ImportKept {
  connection_id: string;
  upsert: boolean;
  send_completion_email: boolean;
}

interface Job {
  id: string;
  type: string;
  status: string;
  created_at?: string;
  connection?: string;
  connection_id?: string;
  upsert?: boolean;
  send_completion_email?: boolean;
  percentage_done?: number;
  time_left_seconds?: number;
  summary?: { failed: number; updated: number; inserted: number; total: number };
  status_details?: unknown;
}
interface RowFailure {
  user?: Record<string, unknown>;
  errors?: { code?: string; message?: string; path?: string }[];
}

/** The failed rows a job page lists at most (the rest stay behind GET /jobs/{id}/errors). */
const MAX_FAILURES = 100;
/** Seconds between reloads of a job page the operator asked to watch. */
const WATCH_SECONDS = 5;
const KB = Math.round(IMPORT_FILE_MAX_BYTES / 1024);

/** The tenant's database connections (GET /connections?strategy=auth0): where users may be imported. */
export function importConnections(c: ConsoleContext, tenant: string): Promise<ApiResult<ImportConnection[]>> {
  return c.var.api.get<ImportConnection[]>(tenant, "/connections", { strategy: "auth0", fields: "id,name", per_page: 100 });
}

/** The "Import users" form of the users screen: a JSON file, the connection, upsert, the completion email. */
export const ImportForm: FC<{ tenant: string; csrf: string; connections: ImportConnection[]; kept?: ImportKept | undefined }> = ({ tenant, csrf, connections, kept }) =>
  connections.length === 0 ? (
    <>
      <h2>Import users</h2>
      <p class="muted">This tenant has no database connection to import users into.</p>
    </>
  ) : (
    <>
      <h2 id="import">Import users</h2>
      <form method="post" action={tenantPath(tenant, "/users/import")} enctype="multipart/form-data" class="card">
        <Csrf token={csrf} />
        <div class="field">
          <label for="f-users">Users file (JSON)</label>
          <input id="f-users" name="users" type="file" accept="application/json,.json" required aria-describedby="h-users" />
          <p class="hint" id="h-users">
            A JSON array of users in the reference platform's import format, at most {KB} KB. The job runs in the background; its page shows the progress.
          </p>
        </div>
        <div class="field">
          <label for="f-connection_id">Import into connection</label>
          <select id="f-connection_id" name="connection_id" required>
            {connections.map((x) => (
              <option value={x.id} selected={kept?.connection_id === x.id}>
                {x.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label>
            <input type="checkbox" name="upsert" value="true" checked={kept?.upsert ?? false} /> Update users who already exist (upsert)
          </label>
        </div>
        <div class="field">
          <label>
            <input type="checkbox" name="send_completion_email" value="true" checked={kept?.send_completion_email ?? true} /> Notify the tenant's support address when the job finishes (set in Tenant settings)
          </label>
        </div>
        <button type="submit">Import users</button>
      </form>
    </>
  );

/**
 * POST /admin/t/:tenant/users/import: POST /jobs/users-imports as multipart/form-data (the reference shape),
 * the file passed on as uploaded; the job's page on success, the users screen with the API's refusal (and the
 * form's choices kept) otherwise. A missing file is sent as no part, so the API names the missing property.
 */
export function importUsers(usersScreen: (c: ConsoleContext, error: string | null, status?: Status, kept?: ImportKept) => Promise<Response>) {
  return async (c: ConsoleContext): Promise<Response> => {
    const tenant = tenantOf(c);
    const form = await c.req.parseBody();
    const kept: ImportKept = { connection_id: str(form.connection_id), upsert: form.upsert === "true", send_completion_email: form.send_completion_email === "true" };
    const body = new FormData();
    const file = form.users;
    if (file instanceof File && file.size > 0) body.append("users", file, "users.json");
    body.append("connection_id", kept.connection_id);
    body.append("upsert", String(kept.upsert));
    body.append("send_completion_email", String(kept.send_completion_email));
    const created = await c.var.api.postForm<Job>(tenant, "/jobs/users-imports", body);
    if (!created.ok) return usersScreen(c, created.error, statusOf(created.status), kept);
    return jobScreen(c, { job: created.body, notice: "Import started: the users are imported in the background.", status: 201 });
  };
}

const active = (job: Job) => job.status === "pending" || job.status === "processing";

/**
 * GET /admin/t/:tenant/jobs/:id: a job's status and progress (GET /jobs/{id}) and, when rows failed, which
 * and why (GET /jobs/{id}/errors). While the job runs, a reload link; `?watch=1` reloads the page every few
 * seconds without JavaScript (a meta refresh the operator turns on and off, WCAG 2.2.1).
 */
export async function jobScreen(c: ConsoleContext, options: { job?: Job; notice?: string; status?: Status } = {}): Promise<Response> {
  const tenant = tenantOf(c);
  let job = options.job;
  let readError: string | null = null;
  let status: Status = options.status ?? 200;
  if (!job) {
    const read = await c.var.api.get<Job>(tenant, `/jobs/${encodeURIComponent(c.req.param("id") as string)}`);
    if (read.ok) job = read.body;
    else {
      readError = read.error;
      status = statusOf(read.status);
    }
  }
  const failures = job && ((job.summary?.failed ?? 0) > 0 || job.status === "failed") ? await c.var.api.get<RowFailure[] | Job | null>(tenant, `/jobs/${encodeURIComponent(job.id)}/errors`) : null;
  const rows = failures?.ok && Array.isArray(failures.body) ? failures.body : [];
  const page = job ? tenantPath(tenant, `/jobs/${encodeURIComponent(job.id)}`) : "";
  const watching = !!job && active(job) && c.req.query("watch") === "1";
  const shell = shellOf(c, job ? `Job ${job.id}` : "Job", { tenant, section: "users", ...(watching ? { refresh: WATCH_SECONDS } : {}) });
  const summary = job?.summary;
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/users")}>All users</a>
      </p>
      <h1>{job ? `Job ${job.id}` : "Job"}</h1>
      <Notice message={options.notice} />
      <ApiError message={readError ?? failures?.error} />
      {job ? (
        <>
          <dl class="pairs card">
            <dt>Status</dt>
            <dd>
              <strong>{job.status}</strong>
            </dd>
            <dt>Type</dt>
            <dd>
              <code>{job.type}</code>
            </dd>
            {job.connection ? (
              <>
                <dt>Connection</dt>
                <dd>{job.connection}</dd>
              </>
            ) : null}
            <dt>Created</dt>
            <dd>{when(job.created_at)}</dd>
            {job.type === "users_import" ? (
              <>
                <dt>Upsert</dt>
                <dd>{job.upsert ? "Yes" : "No"}</dd>
                <dt>Completion email</dt>
                <dd>{job.send_completion_email ? "Yes" : "No"}</dd>
                <dt>
                  <label for="job-progress">Progress</label>
                </dt>
                <dd>
                  <progress id="job-progress" max="100" value={String(job.percentage_done ?? 0)}>
                    {job.percentage_done ?? 0}%
                  </progress>{" "}
                  {job.percentage_done ?? 0}%{job.time_left_seconds !== undefined ? `, about ${job.time_left_seconds} s left` : ""}
                </dd>
              </>
            ) : null}
            {summary ? (
              <>
                <dt>Users in the file</dt>
                <dd>{summary.total}</dd>
                <dt>Inserted</dt>
                <dd>{summary.inserted}</dd>
                <dt>Updated</dt>
                <dd>{summary.updated}</dd>
                <dt>Failed</dt>
                <dd>{summary.failed}</dd>
              </>
            ) : null}
          </dl>
          {job.status_details ? <pre>{JSON.stringify(job.status_details, null, 2)}</pre> : null}
          {active(job) ? (
            <p class="row">
              <a href={page}>{watching ? "Stop refreshing" : "Refresh the status"}</a>
              {watching ? <span class="muted">This page reloads every {WATCH_SECONDS} seconds while the job runs.</span> : <a href={`${page}?watch=1`}>Refresh every {WATCH_SECONDS} seconds</a>}
            </p>
          ) : null}
          {rows.length ? (
            <>
              <h2>Failed rows</h2>
              <DataTable
                caption={rows.length > MAX_FAILURES ? `The first ${MAX_FAILURES} of ${rows.length} failed rows` : rows.length === 1 ? "1 failed row" : `${rows.length} failed rows`}
                rows={rows.slice(0, MAX_FAILURES)}
                columns={[
                  { label: "User", cell: (r) => str(r.user?.email) || str(r.user?.user_id) || str(r.user?.username) || (str(r.user?.name) ? `${str(r.user?.name)} (no email)` : "(no email)") },
                  {
                    label: "Errors",
                    cell: (r) => (
                      <ul>
                        {(r.errors ?? []).map((e) => (
                          <li>
                            <code>{e.code ?? ""}</code> {e.message ?? ""}
                            {e.path ? ` (${e.path})` : ""}
                          </li>
                        ))}
                      </ul>
                    ),
                  },
                ]}
              />
            </>
          ) : null}
        </>
      ) : null}
    </>,
    status,
  );
}
