import type { MigrationReport } from "../../../shared/actions/migration-report";
import type { ConsoleContext } from "../context";
import { EDITOR_SCRIPT } from "./actions";
import { DatabaseForm, type DatabaseDraft, DatabaseSummary, draftOf, MigrationPanel, optionsFromForm } from "./connection-database";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Field, Notice, str, tenantPath } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";
import { ChangeHistory, loadHistory } from "../pages/history";

interface Connection {
  id: string;
  name: string;
  strategy: string;
  options?: Record<string, unknown>;
}
interface Client {
  client_id: string;
  name: string;
}

type Status = 200 | 400 | 403 | 404 | 409;
const statusOf = (s: number): Status => (s === 403 || s === 404 || s === 409 ? s : 400);
const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;
const pathOf = (c: ConsoleContext) => `/connections/${encodeURIComponent(c.req.param("id") as string)}`;
/** The reference platform's password policy levels of a database connection. */
const POLICIES = ["none", "low", "fair", "good", "excellent"] as const;

/**
 * GET /admin/t/:tenant/connections/:id: a connection (GET /connections/{id}): for a database connection its
 * sign-up setting and password policy; the applications it is enabled for (GET /connections/{id}/clients),
 * each switchable (PATCH /connections/{id}/clients); its custom database scripts and configuration, and in
 * import mode the migration report (GET /connections/{id}/status, issue 32).
 */
export async function connectionScreen(
  c: ConsoleContext,
  outcome: { error?: string | null; notice?: string; status?: Status; draft?: DatabaseDraft } = {},
): Promise<Response> {
  const tenant = tenantOf(c);
  const api = c.var.api;
  const [read, enabled, clients, history] = await Promise.all([
    api.get<Connection>(tenant, pathOf(c)),
    api.get<{ clients: { client_id: string }[] }>(tenant, `${pathOf(c)}/clients`, { take: 100 }),
    api.get<Client[]>(tenant, "/clients", { per_page: 100, fields: "client_id,name", include_fields: true }),
    loadHistory(c, tenant, c.req.param("id") as string),
  ]);
  if (!read.ok) return sendConsolePage(c, shellOf(c, "Connection", { tenant, section: "connections" }), <ApiError message={read.error} />, statusOf(read.status));
  const connection = read.body;
  const options = connection.options ?? {};
  const on = new Set(enabled.ok ? enabled.body.clients.map((x) => x.client_id) : []);
  const apps = (clients.ok && Array.isArray(clients.body) ? clients.body : []).map((x) => ({ ...x, enabled: on.has(x.client_id) }));
  const base = tenantPath(tenant, pathOf(c));
  const csrf = c.var.operator.csrf;
  // Write controls only for an operator whose token carries the scope (the API refuses a forged POST anyway).
  const editable = can(c, "update:connections");
  const database = connection.strategy === "auth0";
  const complexity = (options.password_complexity_options ?? {}) as { min_length?: number };
  const draft = outcome.draft ?? draftOf(options);
  const importing = database && options.enabledDatabaseCustomization === true && options.import_mode === true;
  const status = importing ? await api.get<{ gatehouse_migration?: MigrationReport }>(tenant, `${pathOf(c)}/status`) : null;
  const report = status?.ok ? status.body.gatehouse_migration : undefined;
  return sendConsolePage(
    c,
    shellOf(c, connection.name, { tenant, section: "connections", ...(database ? { scripts: [EDITOR_SCRIPT] } : {}) }),
    <>
      <p>
        <a href={tenantPath(tenant, "/connections")}>All connections</a>
      </p>
      <h1>{connection.name}</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? enabled.error ?? clients.error} />
      <p class="card">
        Strategy: <code>{connection.strategy}</code> · Id: <code>{connection.id}</code> ·{" "}
        <a href={`${tenantPath(tenant, "/try-login/start")}?${new URLSearchParams({ connection: connection.name })}`}>Try a login with this connection</a>
      </p>
      {database ? (
        <>
          <h2>Database settings and password policy</h2>
          {editable ? (
            <form method="post" action={base} class="card">
              <Csrf token={csrf} />
              <div class="field">
                <label>
                  <input type="checkbox" name="disable_signup" value="true" checked={options.disable_signup === true} /> Disable sign-ups (only administrators create
                  users)
                </label>
              </div>
              <div class="field">
                <label for="f-passwordPolicy">Password policy</label>
                <select id="f-passwordPolicy" name="passwordPolicy">
                  {POLICIES.map((p) => (
                    <option value={p} selected={(options.passwordPolicy ?? "good") === p}>
                      {p}
                    </option>
                  ))}
                </select>
              </div>
              <Field name="min_length" label="Minimum password length" type="number" value={complexity.min_length === undefined ? "" : String(complexity.min_length)} hint="Empty: the policy's own minimum." />
              <button type="submit">Save settings</button>
            </form>
          ) : (
            <p class="card">
              Sign-ups: <strong>{options.disable_signup === true ? "disabled" : "enabled"}</strong> · Password policy: <strong>{options.passwordPolicy ?? "good"}</strong>
              {complexity.min_length === undefined ? null : <> · Minimum length: <strong>{String(complexity.min_length)}</strong></>}
            </p>
          )}
          {report ? <MigrationPanel report={report} /> : null}
          <h2>Custom database</h2>
          {editable ? <DatabaseForm action={`${base}/database`} csrf={csrf} draft={draft} /> : <DatabaseSummary draft={draft} />}
        </>
      ) : null}
      <h2>Applications</h2>
      <DataTable
        caption={`Applications and whether ${connection.name} is enabled for them`}
        rows={apps}
        columns={[
          { label: "Application", cell: (a) => <a href={tenantPath(tenant, `/applications/${encodeURIComponent(a.client_id)}`)}>{a.name}</a> },
          { label: "Enabled", cell: (a) => (a.enabled ? "Yes" : "No") },
          ...(editable
            ? [
                {
                  label: "Change",
                  cell: (a: (typeof apps)[number]) => (
                    <form method="post" action={`${base}/clients`} class="inline">
                      <Csrf token={csrf} />
                      <input type="hidden" name="client_id" value={a.client_id} />
                      <input type="hidden" name="status" value={a.enabled ? "false" : "true"} />
                      <button type="submit" class="secondary" aria-label={`${a.enabled ? "Disable" : "Enable"} for ${a.name}`}>
                        {a.enabled ? "Disable" : "Enable"}
                      </button>
                    </form>
                  ),
                },
              ]
            : []),
        ]}
        empty="No application yet."
      />
      <ChangeHistory tenant={tenant} result={history} />
    </>,
    outcome.status ?? 200,
  );
}

/** POST .../connections/:id: PATCH /connections/{id} with the options as they are plus the form's settings. */
export async function updateConnection(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const form = await c.req.parseBody();
  const read = await c.var.api.get<Connection>(tenant, pathOf(c));
  if (!read.ok) return connectionScreen(c, { error: read.error, status: statusOf(read.status) });
  const options: Record<string, unknown> = { ...(read.body.options ?? {}), disable_signup: form.disable_signup === "true", passwordPolicy: str(form.passwordPolicy) };
  const minLength = str(form.min_length).trim();
  const complexity = { ...((options.password_complexity_options ?? {}) as Record<string, unknown>) };
  if (minLength) complexity.min_length = Number(minLength);
  else delete complexity.min_length;
  options.password_complexity_options = complexity;
  const updated = await c.var.api.patch(tenant, pathOf(c), { options });
  return connectionScreen(c, updated.ok ? { notice: "Settings saved." } : { error: updated.error, status: statusOf(updated.status) });
}

/**
 * POST .../connections/:id/database: PATCH /connections/{id} with the stored options and the form's custom
 * database (scripts, switches, configuration; see `optionsFromForm`). A refusal (a script that does not
 * compile, import mode without get_user) shows the API's message with the form as submitted.
 */
export async function saveCustomDatabase(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const form = await c.req.parseBody();
  const read = await c.var.api.get<Connection>(tenant, pathOf(c));
  if (!read.ok) return connectionScreen(c, { error: read.error, status: statusOf(read.status) });
  const { options, draft } = optionsFromForm(read.body.options ?? {}, form);
  const updated = await c.var.api.patch(tenant, pathOf(c), { options });
  if (!updated.ok) return connectionScreen(c, { error: updated.error, status: statusOf(updated.status), draft });
  return connectionScreen(c, { notice: "Custom database saved." });
}

/** POST .../connections/:id/clients: PATCH /connections/{id}/clients [{client_id, status}]. */
export async function switchConnectionClient(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const body = [{ client_id: str(form.client_id), status: form.status === "true" }];
  const updated = await c.var.api.patch(tenantOf(c), `${pathOf(c)}/clients`, body);
  return connectionScreen(c, updated.ok ? { notice: body[0]?.status ? "Enabled for the application." : "Disabled for the application." } : { error: updated.error, status: statusOf(updated.status) });
}
