import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { stepUpRequired } from "../login";
import { Csrf } from "../pages/layout";
import { ApiError, Field, listOf, Notice, Pager, pageOf, str, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";
import { readStatus, type Status } from "../pages/outcome";
import { ChangeHistory, loadHistory } from "../pages/history";

interface Client {
  client_id: string;
  name: string;
  app_type?: string;
  description?: string;
  callbacks?: string[];
  allowed_logout_urls?: string[];
  web_origins?: string[];
  client_secret?: string;
  token_endpoint_auth_method?: string;
}

const PER_PAGE = 50;
const APP_TYPES = [
  ["regular_web", "Regular web application"],
  ["spa", "Single-page application"],
  ["native", "Native application"],
  ["non_interactive", "Machine to machine"],
] as const;

const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;

/** GET /admin/t/:tenant/applications: the list (GET /clients) and the create form. */
export async function applicationsScreen(c: ConsoleContext, error: string | null = null, status: Status = 200): Promise<Response> {
  const tenant = tenantOf(c);
  const page = pageOf(c.req.query("page"));
  const list = await c.var.api.get<{ clients: Client[]; total: number }>(tenant, "/clients", { page, per_page: PER_PAGE, include_totals: true });
  const clients = list.ok ? list.body.clients : [];
  const shell = shellOf(c, "Applications", { tenant, section: "applications" });
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Applications</h1>
      <ApiError message={error ?? list.error} />
      <table>
        <caption class="muted">Applications of {tenant}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Client ID</th>
          </tr>
        </thead>
        <tbody>
          {clients.map((x) => (
            <tr>
              <td>
                <a href={tenantPath(tenant, `/applications/${encodeURIComponent(x.client_id)}`)}>{x.name}</a>
              </td>
              <td>{x.app_type ?? ""}</td>
              <td>
                <code>{x.client_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.ok ? <Pager base={tenantPath(tenant, "/applications")} page={page} perPage={PER_PAGE} total={list.body.total ?? clients.length} /> : null}
      {can(c, "create:clients") ? (
        <>
          <h2>Create an application</h2>
          <form method="post" action={tenantPath(tenant, "/applications")} class="card">
            <Csrf token={c.var.operator.csrf} />
            <Field name="name" label="Name" required />
            <div class="field">
              <label for="f-app_type">Type</label>
              <select id="f-app_type" name="app_type">
                {APP_TYPES.map(([value, label]) => (
                  <option value={value}>{label}</option>
                ))}
              </select>
            </div>
            <Field name="callbacks" label="Allowed callback URLs" multiline hint="One URL per line." />
            <button type="submit">Create application</button>
          </form>
        </>
      ) : null}
    </>,
    // A refused list read is the page's status too (403 for an operator without read:clients).
    status === 200 ? readStatus(list) : status,
  );
}

/** POST /admin/t/:tenant/applications: POST /clients; the new secret is shown once, on its page. */
export async function createApplication(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const form = await c.req.parseBody();
  const callbacks = listOf(form.callbacks);
  const body = { name: str(form.name).trim(), app_type: str(form.app_type), ...(callbacks.length ? { callbacks } : {}) };
  const created = await c.var.api.post<Client>(tenant, "/clients", body);
  if (!created.ok) return applicationsScreen(c, created.error, created.status === 403 ? 403 : 400);
  return applicationScreen(c, { client: created.body, notice: "Application created. Copy its secret now: it is not shown again.", status: 201 });
}

interface DetailOptions {
  client?: Client;
  error?: string | null;
  notice?: string;
  status?: 200 | 201 | 400 | 403 | 404;
}

/** GET /admin/t/:tenant/applications/:id: settings, callbacks and origins, secret rotation, deletion. */
export async function applicationScreen(c: ConsoleContext, options: DetailOptions = {}): Promise<Response> {
  const tenant = tenantOf(c);
  let client = options.client;
  const id = client?.client_id ?? (c.req.param("id") as string);
  if (!client) {
    const read = await c.var.api.get<Client>(tenant, `/clients/${encodeURIComponent(id)}`);
    if (!read.ok) return applicationsScreen(c, read.error, read.status === 403 ? 403 : 400);
    client = withoutSecret(read.body);
  }
  const base = tenantPath(tenant, `/applications/${encodeURIComponent(id)}`);
  const history = await loadHistory(c, tenant, id);
  const csrf = c.var.operator.csrf;
  const issuer = c.var.settings.issuer;
  const shell = shellOf(c, client.name, { tenant, section: "applications" });
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/applications")}>All applications</a>
      </p>
      <h1>{client.name}</h1>
      <Notice message={options.notice} />
      <ApiError message={options.error} />
      <div class="card">
        <p>
          Client ID: <code>{client.client_id}</code> · Type: {client.app_type ?? ""} ·{" "}
          <a href={tenantPath(tenant, `/logs?${new URLSearchParams({ client_id: client.client_id })}`)}>Logs of this application</a>
        </p>
        {client.client_secret ? (
          <p>
            Client secret (shown once): <span class="secret">{client.client_secret}</span>
          </p>
        ) : null}
      </div>
      <h2>Settings</h2>
      {can(c, "update:clients") ? (
        <form method="post" action={base} class="card">
          <Csrf token={csrf} />
          <Field name="name" label="Name" value={client.name} required />
          <Field name="description" label="Description" value={client.description} />
          <Field name="callbacks" label="Allowed callback URLs" value={(client.callbacks ?? []).join("\n")} multiline hint="One URL per line." />
          <Field name="allowed_logout_urls" label="Allowed logout URLs" value={(client.allowed_logout_urls ?? []).join("\n")} multiline />
          <Field name="web_origins" label="Allowed web origins" value={(client.web_origins ?? []).join("\n")} multiline />
          <button type="submit">Save changes</button>
        </form>
      ) : (
        <div class="card">
          <p>Description: {client.description ?? ""}</p>
          <p>Allowed callback URLs: {(client.callbacks ?? []).join(", ")}</p>
          <p>Allowed logout URLs: {(client.allowed_logout_urls ?? []).join(", ")}</p>
          <p>Allowed web origins: {(client.web_origins ?? []).join(", ")}</p>
        </div>
      )}
      <h2>Quick start</h2>
      <pre>{`Issuer:    ${tenantIssuer(issuer, tenant)}\nDiscovery: ${tenantIssuer(issuer, tenant)}.well-known/openid-configuration\nClient ID: ${client.client_id}`}</pre>
      {can(c, "update:client_keys") ? (
        <>
          <h2>Credentials</h2>
          <form method="post" action={`${base}/rotate-secret`} class="card">
            <Csrf token={csrf} />
            <p>A new secret replaces the current one at once; applications using the old one stop working.</p>
            <button type="submit" class="secondary">
              Rotate secret
            </button>
          </form>
        </>
      ) : null}
      {can(c, "delete:clients") ? (
        <>
          <h2>Danger zone</h2>
          <form method="post" action={`${base}/delete`} class="card">
            <Csrf token={csrf} />
            <p>Deleting asks for your password again unless you logged in during the last five minutes.</p>
            <button type="submit" class="danger">
              Delete application
            </button>
          </form>
        </>
      ) : null}
      <ChangeHistory tenant={tenant} result={history} />
    </>,
    options.status ?? 200,
  );
}

/** A read never shows the secret again (issue 30: only on creation and rotation). */
function withoutSecret(client: Client): Client {
  const { client_secret: _secret, ...rest } = client;
  return rest;
}

/** A tenant's issuer: its subdomain of the apex, with the apex's scheme (ARCHITECTURE §5). */
export function tenantIssuer(apexIssuer: string, tenant: string): string {
  const url = new URL(apexIssuer);
  return `${url.protocol}//${tenant}.${url.host}/`;
}

/** POST /admin/t/:tenant/applications/:id: PATCH /clients/{id}. */
export async function updateApplication(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const id = c.req.param("id") as string;
  const form = await c.req.parseBody();
  const body = {
    name: str(form.name).trim(),
    description: str(form.description),
    callbacks: listOf(form.callbacks),
    allowed_logout_urls: listOf(form.allowed_logout_urls),
    web_origins: listOf(form.web_origins),
  };
  const updated = await c.var.api.patch<Client>(tenant, `/clients/${encodeURIComponent(id)}`, body);
  if (!updated.ok) return applicationScreen(c, { error: updated.error, status: updated.status === 403 ? 403 : 400 });
  return applicationScreen(c, { client: withoutSecret(updated.body), notice: "Changes saved." });
}

/** POST /admin/t/:tenant/applications/:id/rotate-secret: the new secret is shown once. */
export async function rotateApplicationSecret(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const id = c.req.param("id") as string;
  const rotated = await c.var.api.post<Client>(tenant, `/clients/${encodeURIComponent(id)}/rotate-secret`);
  if (!rotated.ok) return applicationScreen(c, { error: rotated.error, status: rotated.status === 403 ? 403 : 400 });
  return applicationScreen(c, { client: rotated.body, notice: "Secret rotated. Copy it now: it is not shown again." });
}

/** POST /admin/t/:tenant/applications/:id/delete: DELETE /clients/{id}. */
export async function deleteApplication(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const id = c.req.param("id") as string;
  const stepUp = stepUpRequired(c, tenantPath(tenant, `/applications/${encodeURIComponent(id)}`));
  if (stepUp) return stepUp;
  const deleted = await c.var.api.delete(tenant, `/clients/${encodeURIComponent(id)}`);
  if (!deleted.ok) return applicationScreen(c, { error: deleted.error, status: deleted.status === 403 ? 403 : 400 });
  return c.redirect(tenantPath(tenant, "/applications"), 303);
}
