import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { stepUpRequired } from "../login";
import { ChangeHistory, loadHistory } from "../pages/history";
import { Csrf } from "../pages/layout";
import { readStatus, type Status, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, Pager, pageOf, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";
import { type LogEntry, logColumns } from "./logs";
import { sendConsolePage, shellOf } from "../render";
import { AccessSections, accessWrite, type Identity, loadAccess } from "./user-access";
import { ImportForm, type ImportKept, importConnections, importUsers } from "./user-import";

interface User {
  user_id: string;
  email?: string;
  name?: string;
  blocked?: boolean;
  logins_count?: number;
  last_login?: string;
  created_at?: string;
  identities?: Identity[];
}
interface Role {
  id: string;
  name: string;
  description?: string;
}

const PER_PAGE = 50;
const RECENT_LOGS = 10;
const DEFAULT_CONNECTION = "Username-Password-Authentication";

/** GET /admin/t/:tenant/users: search with the Lucene `q` (GET /users), totals, and the create form. */
export async function usersScreen(c: ConsoleContext, error: string | null = null, status?: Status, kept?: ImportKept): Promise<Response> {
  const tenant = tenantOf(c);
  const page = pageOf(c.req.query("page"));
  const q = (c.req.query("q") ?? "").trim();
  const mayCreate = can(c, "create:users");
  // The import form lists the tenant's database connections: one more API call, made only when the operator
  // opened the form (`?import=1`) or an import was refused, so the list itself stays one call (bench row issue 30).
  const showImport = mayCreate && (kept !== undefined || c.req.query("import") === "1");
  const [list, connections] = await Promise.all([
    c.var.api.get<{ users: User[]; total: number }>(tenant, "/users", {
      page,
      per_page: PER_PAGE,
      include_totals: true,
      ...(q ? { q, search_engine: "v3" } : {}),
    }),
    showImport ? importConnections(c, tenant) : null,
  ]);
  const users = list.ok ? list.body.users : [];
  const shell = shellOf(c, "Users", { tenant, section: "users" });
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Users</h1>
      <ApiError message={error ?? list.error} />
      <form method="get" action={tenantPath(tenant, "/users")} class="row card">
        <div class="field">
          <label for="f-q">Search</label>
          <input id="f-q" name="q" value={q} aria-describedby="h-q" />
          <p class="hint" id="h-q">
            Lucene syntax, for example <code>email:"ann@example.com"</code>, <code>name:ann*</code> or <code>user_id:"auth0|123"</code>.
          </p>
        </div>
        <div class="field">
          <button type="submit" class="secondary">
            Search
          </button>
        </div>
      </form>
      <DataTable
        caption={list.ok ? `${list.body.total ?? users.length} users` : "Users"}
        rows={users}
        columns={[
          { label: "Email", cell: (u) => <a href={tenantPath(tenant, `/users/${encodeURIComponent(u.user_id)}`)}>{u.email ?? u.user_id}</a> },
          { label: "Name", cell: (u) => u.name ?? "" },
          { label: "Logins", cell: (u) => String(u.logins_count ?? 0) },
          { label: "Status", cell: (u) => (u.blocked ? "Blocked" : "Active") },
        ]}
      />
      {list.ok ? <Pager base={tenantPath(tenant, "/users")} page={page} perPage={PER_PAGE} total={list.body.total ?? users.length} extra={q ? { q } : {}} /> : null}
      {mayCreate ? (
        <>
          <h2>Create a user</h2>
          <form method="post" action={tenantPath(tenant, "/users")} class="card">
            <Csrf token={c.var.operator.csrf} />
            <Field name="email" label="Email" type="email" required />
            <Field name="password" label="Password" type="password" required />
            <Field name="connection" label="Connection" value={DEFAULT_CONNECTION} required />
            <button type="submit">Create user</button>
          </form>
          {connections?.ok ? (
            <ImportForm tenant={tenant} csrf={c.var.operator.csrf} connections={connections.body} kept={kept} />
          ) : showImport ? null : (
            <p>
              <a href={`${tenantPath(tenant, "/users")}?import=1#import`}>Import users from a file</a>
            </p>
          )}
        </>
      ) : null}
    </>,
    status ?? readStatus(list),
  );
}

/** POST /admin/t/:tenant/users: POST /users. */
export async function createUser(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const form = await c.req.parseBody();
  const body = { email: str(form.email).trim(), password: str(form.password), connection: str(form.connection).trim() || DEFAULT_CONNECTION };
  const created = await c.var.api.post<User>(tenant, "/users", body);
  if (!created.ok) return usersScreen(c, created.error, statusOf(created.status));
  return userScreen(c, { user: created.body, notice: "User created.", status: 201 });
}

interface DetailOptions {
  user?: User;
  error?: string | null;
  notice?: string;
  status?: Status;
}

/**
 * GET /admin/t/:tenant/users/:id: profile, block/unblock, delete, roles, then sessions, refresh tokens, MFA,
 * identities, organizations and permissions (user-access), recent logs, change history and the raw JSON.
 * Write controls only for an operator whose token carries the route's scope.
 */
export async function userScreen(c: ConsoleContext, options: DetailOptions = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const api = c.var.api;
  let user = options.user;
  const id = user?.user_id ?? (c.req.param("id") as string);
  if (!user) {
    const read = await api.get<User>(tenant, `/users/${encodeURIComponent(id)}`);
    if (!read.ok) return usersScreen(c, read.error, statusOf(read.status));
    user = read.body;
  }
  const path = `/users/${encodeURIComponent(id)}`;
  const [held, all, recent, access, history] = await Promise.all([
    api.get<Role[]>(tenant, `${path}/roles`),
    api.get<Role[]>(tenant, "/roles", { per_page: 100 }),
    api.get<LogEntry[]>(tenant, `${path}/logs`, { per_page: RECENT_LOGS, sort: "date:-1" }),
    loadAccess(c, tenant, path),
    loadHistory(c, tenant, id),
  ]);
  const mayUpdate = can(c, "update:users");
  const mayDelete = can(c, "delete:users");
  const mayAssign = can(c, "create:role_members");
  const mayRemove = can(c, "delete:role_members");
  const heldRoles = held.ok ? held.body : [];
  const offered = (all.ok ? all.body : []).filter((r) => !heldRoles.some((h) => h.id === r.id));
  const base = tenantPath(tenant, path);
  const csrf = c.var.operator.csrf;
  const shell = shellOf(c, user.email ?? user.user_id, { tenant, section: "users" });
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/users")}>All users</a>
      </p>
      <h1>{user.email ?? user.user_id}</h1>
      <Notice message={options.notice} />
      <ApiError message={options.error} />
      <table>
        <caption class="muted">Profile</caption>
        <tbody>
          <tr>
            <th scope="row">User ID</th>
            <td>
              <code>{user.user_id}</code>
            </td>
          </tr>
          <tr>
            <th scope="row">Name</th>
            <td>{user.name ?? ""}</td>
          </tr>
          <tr>
            <th scope="row">Status</th>
            <td>{user.blocked ? "Blocked" : "Active"}</td>
          </tr>
          <tr>
            <th scope="row">Created</th>
            <td>{when(user.created_at)}</td>
          </tr>
          <tr>
            <th scope="row">Last login</th>
            <td>{when(user.last_login)}</td>
          </tr>
        </tbody>
      </table>
      <div class="row">
        {mayUpdate ? (
          <form method="post" action={`${base}/${user.blocked ? "unblock" : "block"}`} class="inline">
            <Csrf token={csrf} />
            <button type="submit" class="secondary">
              {user.blocked ? "Unblock user" : "Block user"}
            </button>
          </form>
        ) : null}
        {mayDelete ? (
          <form method="post" action={`${base}/delete`} class="inline">
            <Csrf token={csrf} />
            <button type="submit" class="danger">
              Delete user
            </button>
          </form>
        ) : null}
      </div>
      <h2>Roles</h2>
      <ApiError message={held.error ?? all.error} />
      {held.ok && heldRoles.length === 0 ? <p class="muted">No roles assigned.</p> : null}
      <ul>
        {heldRoles.map((r) => (
          <li>
            {mayRemove ? (
              <form method="post" action={`${base}/roles/remove`} class="inline">
                <Csrf token={csrf} />
                <input type="hidden" name="role" value={r.id} />
                {r.name}{" "}
                <button type="submit" class="secondary" aria-label={`Remove role ${r.name}`}>
                  Remove
                </button>
              </form>
            ) : (
              <a href={tenantPath(tenant, `/roles/${encodeURIComponent(r.id)}`)}>{r.name}</a>
            )}
          </li>
        ))}
      </ul>
      {mayAssign && offered.length ? (
        <form method="post" action={`${base}/roles`} class="row card">
          <Csrf token={csrf} />
          <div class="field">
            <label for="f-role">Assign a role</label>
            <select id="f-role" name="role">
              {offered.map((r) => (
                <option value={r.id}>{r.name}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <button type="submit">Assign</button>
          </div>
        </form>
      ) : null}
      <AccessSections c={c} tenant={tenant} userPath={path} identities={user.identities ?? []} data={access} />
      <h2>Recent logs</h2>
      <ApiError message={recent.error} />
      {recent.ok ? <DataTable caption={`The last ${RECENT_LOGS} log events of this user`} rows={recent.body} columns={logColumns(tenant)} empty="No log event yet." /> : null}
      <p>
        <a href={tenantPath(tenant, `/logs?${new URLSearchParams({ user_id: user.user_id })}`)}>All logs of this user</a>
      </p>
      <ChangeHistory tenant={tenant} result={history} />
      <h2>Raw JSON</h2>
      <pre>{JSON.stringify(user, null, 2)}</pre>
    </>,
    options.status ?? 200,
  );
}

const userPath = (c: ConsoleContext) => `/users/${encodeURIComponent(c.req.param("id") as string)}`;

/** POST .../users/:id/block and /unblock: PATCH /users/{id} {blocked}. */
export function setBlocked(blocked: boolean) {
  return async (c: ConsoleContext): Promise<Response> => {
    const updated = await c.var.api.patch<User>(tenantOf(c), userPath(c), { blocked });
    if (!updated.ok) return userScreen(c, { error: updated.error, status: statusOf(updated.status) });
    return userScreen(c, { user: updated.body, notice: blocked ? "User blocked." : "User unblocked." });
  };
}

/** POST .../users/:id/delete: DELETE /users/{id}. */
export async function deleteUser(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const stepUp = stepUpRequired(c, tenantPath(tenant, userPath(c)));
  if (stepUp) return stepUp;
  const deleted = await c.var.api.delete(tenant, userPath(c));
  if (!deleted.ok) return userScreen(c, { error: deleted.error, status: statusOf(deleted.status) });
  return c.redirect(tenantPath(tenant, "/users"), 303);
}

/** POST .../users/:id/roles (assign) and /roles/remove: POST or DELETE /users/{id}/roles {roles}. */
export function changeRoles(assign: boolean) {
  return async (c: ConsoleContext): Promise<Response> => {
    const form = await c.req.parseBody();
    const body = { roles: [str(form.role)] };
    const api = c.var.api;
    const result = assign ? await api.post(tenantOf(c), `${userPath(c)}/roles`, body) : await api.delete(tenantOf(c), `${userPath(c)}/roles`, body);
    if (!result.ok) return userScreen(c, { error: result.error, status: statusOf(result.status) });
    return userScreen(c, { notice: assign ? "Role assigned." : "Role removed." });
  };
}

/** POST .../users/:id/<sessions|refresh-tokens|mfa|identities write> (user-access): the user's page with the outcome. */
export const userAccessWrite = (write: string) =>
  accessWrite(write, (c, outcome) => userScreen(c, "notice" in outcome ? { notice: outcome.notice } : { error: outcome.error, status: statusOf(outcome.status) }));

/** POST /admin/t/:tenant/users/import: the import job (user-import), refused back onto this screen. */
export const importUsersJob = importUsers(usersScreen);
