import type { Child } from "hono/jsx";
import { SIGNING_ALGS, TOKEN_DIALECTS } from "../../../shared/schemas/resource-servers";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Field, Notice, str, tenantPath } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";
import { ChangeHistory, loadHistory } from "../pages/history";

interface Api {
  id: string;
  name: string;
  identifier: string;
  signing_alg?: string;
  enforce_policies?: boolean;
  token_dialect?: string;
  allow_offline_access?: boolean;
  token_lifetime?: number;
  is_system?: boolean;
  scopes?: { value: string; description?: string }[];
}
interface Role {
  id: string;
  name: string;
  description?: string;
}
interface Permission {
  permission_name: string;
  resource_server_identifier: string;
  resource_server_name?: string;
}

type Status = 200 | 400 | 403 | 404 | 409;
const statusOf = (s: number): Status => (s === 403 || s === 404 || s === 409 ? s : 400);
const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;
const idOf = (c: ConsoleContext) => encodeURIComponent(c.req.param("id") as string);
interface Outcome {
  error?: string | null;
  notice?: string;
  status?: Status;
}

/** A settings card: a form when the operator may save it, the same fields read-only (no form) otherwise. */
const SettingsBox = (p: { editable: boolean; action: string; children?: Child }) =>
  p.editable ? (
    <form method="post" action={p.action} class="card">
      {p.children}
    </form>
  ) : (
    <div class="card">{p.children}</div>
  );

/** GET /admin/t/:tenant/apis/:id: an API's settings (signing algorithm, RBAC, token dialect) and scopes (GET /resource-servers/{id}). */
export async function apiScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const [read, history] = await Promise.all([c.var.api.get<Api>(tenant, `/resource-servers/${idOf(c)}`), loadHistory(c, tenant, c.req.param("id") as string)]);
  if (!read.ok) return sendConsolePage(c, shellOf(c, "API", { tenant, section: "apis" }), <ApiError message={read.error} />, statusOf(read.status));
  const api = read.body;
  const base = tenantPath(tenant, `/apis/${idOf(c)}`);
  const csrf = c.var.operator.csrf;
  const editable = can(c, "update:resource_servers");
  return sendConsolePage(
    c,
    shellOf(c, api.name, { tenant, section: "apis" }),
    <>
      <p>
        <a href={tenantPath(tenant, "/apis")}>All APIs</a>
      </p>
      <h1>{api.name}</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error} />
      <p class="card">
        Identifier (audience): <code>{api.identifier}</code>
        {api.is_system ? " · system API" : ""}
      </p>
      <h2>Settings</h2>
      <SettingsBox editable={editable} action={base}>
        {editable ? <Csrf token={csrf} /> : null}
        <fieldset disabled={!editable} class="plain">
          <div class="field">
            <label for="f-signing_alg">Signing algorithm</label>
            <select id="f-signing_alg" name="signing_alg">
              {SIGNING_ALGS.map((alg) => (
                <option value={alg} selected={api.signing_alg === alg}>
                  {alg}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label>
              <input type="checkbox" name="enforce_policies" value="true" checked={!!api.enforce_policies} /> Enable RBAC (enforce policies)
            </label>
          </div>
          <div class="field">
            <label for="f-token_dialect">Token dialect</label>
            <select id="f-token_dialect" name="token_dialect" aria-describedby="h-token_dialect">
              {TOKEN_DIALECTS.map((d) => (
                <option value={d} selected={(api.token_dialect ?? "access_token") === d}>
                  {d}
                </option>
              ))}
            </select>
            <p class="hint" id="h-token_dialect">
              access_token_authz adds the user's permissions to the access token.
            </p>
          </div>
          <div class="field">
            <label>
              <input type="checkbox" name="allow_offline_access" value="true" checked={!!api.allow_offline_access} /> Allow offline access (refresh tokens)
            </label>
          </div>
          <Field name="token_lifetime" label="Token lifetime (seconds)" type="number" value={String(api.token_lifetime ?? "")} />
        </fieldset>
        {editable ? <button type="submit">Save settings</button> : null}
      </SettingsBox>
      <h2>Scopes</h2>
      <DataTable
        caption={`Scopes of ${api.name}`}
        rows={api.scopes ?? []}
        columns={[
          { label: "Scope", cell: (s) => <code>{s.value}</code> },
          { label: "Description", cell: (s) => s.description ?? "" },
        ]}
        empty="No scope yet."
      />
      {editable ? (
        <form method="post" action={`${base}/scopes`} class="card">
          <Csrf token={csrf} />
          <Field name="value" label="Scope" required hint="For example read:messages." />
          <Field name="description" label="Scope description" />
          <button type="submit">Add scope</button>
        </form>
      ) : null}
      <ChangeHistory tenant={tenant} result={history} />
    </>,
    outcome.status ?? 200,
  );
}

/** POST .../apis/:id: PATCH /resource-servers/{id} with the settings form. */
export async function updateApi(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const lifetime = str(form.token_lifetime).trim();
  const body = {
    signing_alg: str(form.signing_alg),
    enforce_policies: form.enforce_policies === "true",
    token_dialect: str(form.token_dialect),
    allow_offline_access: form.allow_offline_access === "true",
    ...(lifetime ? { token_lifetime: Number(lifetime) } : {}),
  };
  const updated = await c.var.api.patch(tenantOf(c), `/resource-servers/${idOf(c)}`, body);
  return apiScreen(c, updated.ok ? { notice: "Settings saved." } : { error: updated.error, status: statusOf(updated.status) });
}

/** POST .../apis/:id/scopes: PATCH /resource-servers/{id} with the scopes plus the new one. */
export async function addApiScope(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const tenant = tenantOf(c);
  const read = await c.var.api.get<Api>(tenant, `/resource-servers/${idOf(c)}`);
  if (!read.ok) return apiScreen(c, { error: read.error, status: statusOf(read.status) });
  const description = str(form.description).trim();
  const scopes = [...(read.body.scopes ?? []), { value: str(form.value).trim(), ...(description ? { description } : {}) }];
  const updated = await c.var.api.patch(tenant, `/resource-servers/${idOf(c)}`, { scopes });
  return apiScreen(c, updated.ok ? { notice: "Scope added." } : { error: updated.error, status: statusOf(updated.status) });
}

/** GET /admin/t/:tenant/roles/:id: a role and its permissions (GET /roles/{id}, /roles/{id}/permissions). */
export async function roleScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const path = `/roles/${idOf(c)}`;
  const [read, permissions, history] = await Promise.all([
    c.var.api.get<Role>(tenant, path),
    c.var.api.get<Permission[]>(tenant, `${path}/permissions`, { per_page: 100 }),
    loadHistory(c, tenant, c.req.param("id") as string),
  ]);
  if (!read.ok) return sendConsolePage(c, shellOf(c, "Role", { tenant, section: "roles" }), <ApiError message={read.error} />, statusOf(read.status));
  const role = read.body;
  const base = tenantPath(tenant, path);
  const csrf = c.var.operator.csrf;
  const editable = can(c, "update:roles");
  return sendConsolePage(
    c,
    shellOf(c, role.name, { tenant, section: "roles" }),
    <>
      <p>
        <a href={tenantPath(tenant, "/roles")}>All roles</a>
      </p>
      <h1>{role.name}</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? permissions.error} />
      {role.description ? <p>{role.description}</p> : null}
      <h2>Permissions</h2>
      <DataTable
        caption={`Permissions of ${role.name}`}
        rows={permissions.ok && Array.isArray(permissions.body) ? permissions.body : []}
        columns={[
          { label: "Permission", cell: (p) => <code>{p.permission_name}</code> },
          { label: "API", cell: (p) => p.resource_server_name ?? p.resource_server_identifier },
          ...(editable
            ? [
                {
                  label: "Remove",
                  cell: (p: Permission) => (
                    <form method="post" action={`${base}/permissions/remove`} class="inline">
                      <Csrf token={csrf} />
                      <input type="hidden" name="resource_server_identifier" value={p.resource_server_identifier} />
                      <input type="hidden" name="permission_name" value={p.permission_name} />
                      <button type="submit" class="secondary" aria-label={`Remove ${p.permission_name}`}>
                        Remove
                      </button>
                    </form>
                  ),
                },
              ]
            : []),
        ]}
        empty="No permission yet."
      />
      {editable ? (
        <form method="post" action={`${base}/permissions`} class="card">
          <Csrf token={csrf} />
          <Field name="resource_server_identifier" label="API identifier" required />
          <Field name="permission_name" label="Permission" required hint="One of the API's scopes." />
          <button type="submit">Add permission</button>
        </form>
      ) : null}
      <ChangeHistory tenant={tenant} result={history} />
    </>,
    outcome.status ?? 200,
  );
}

/** POST .../roles/:id/permissions (add) and /permissions/remove: POST or DELETE /roles/{id}/permissions. */
export function changePermissions(add: boolean) {
  return async (c: ConsoleContext): Promise<Response> => {
    const form = await c.req.parseBody();
    const body = { permissions: [{ resource_server_identifier: str(form.resource_server_identifier).trim(), permission_name: str(form.permission_name).trim() }] };
    const path = `/roles/${idOf(c)}/permissions`;
    const result = add ? await c.var.api.post(tenantOf(c), path, body) : await c.var.api.delete(tenantOf(c), path, body);
    return roleScreen(c, result.ok ? { notice: add ? "Permission added." : "Permission removed." } : { error: result.error, status: statusOf(result.status) });
  };
}
