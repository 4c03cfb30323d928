import type { ApiResult } from "../api";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { stepUpRequired } from "../login";
import { Csrf } from "../pages/layout";
import { ApiError, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";

/**
 * The access half of a user's page (issue 30): sessions, refresh tokens, MFA enrollments, linked identities,
 * organizations and permissions, each read through its own /api/v2 route with the operator's token. Every
 * write control is offered only to an operator whose token carries the route's scope, and every revocation
 * asks for a recent login (step-up) first.
 */

export interface Identity {
  connection: string;
  provider: string;
  user_id: string;
  isSocial?: boolean;
}
interface Session {
  id: string;
  created_at?: string;
  last_interacted_at?: string;
  expires_at?: string | null;
  clients?: { client_id: string }[];
  authentication?: { methods?: { name: string }[] };
  device?: Record<string, string>;
}
interface RefreshToken {
  id: string;
  client_id: string;
  created_at?: string;
  last_exchanged_at?: string | null;
  expires_at?: string | null;
  revoked_at?: string;
  resource_servers?: { audience: string }[];
}
interface Enrollment {
  id: string;
  type: string;
  status: string;
  name?: string;
  identifier?: string;
  enrolled_at?: string;
}
interface Organization {
  id: string;
  name: string;
  display_name?: string;
}
interface Permission {
  permission_name: string;
  resource_server_identifier: string;
  sources?: { source_type?: string; source_name?: string }[];
}

/** A list answer as an array, whether the API sent the bare array or its paged envelope. */
function rowsOf<T>(result: ApiResult, key: string): T[] {
  const body = result.body;
  if (Array.isArray(body)) return body as T[];
  const inner = body && typeof body === "object" ? (body as Record<string, unknown>)[key] : undefined;
  return Array.isArray(inner) ? (inner as T[]) : [];
}

export interface AccessData {
  sessions: ApiResult;
  tokens: ApiResult;
  enrollments: ApiResult;
  organizations: ApiResult;
  permissions: ApiResult;
}

const LIMIT = 50;

/** The reads behind the section, made together (each answer, or its refusal, shown in its own place). */
export async function loadAccess(c: ConsoleContext, tenant: string, userPath: string): Promise<AccessData> {
  const api = c.var.api;
  const [sessions, tokens, enrollments, organizations, permissions] = await Promise.all([
    api.get(tenant, `${userPath}/sessions`),
    api.get(tenant, `${userPath}/refresh-tokens`),
    api.get(tenant, `${userPath}/enrollments`),
    api.get(tenant, `${userPath}/organizations`, { per_page: LIMIT }),
    api.get(tenant, `${userPath}/permissions`, { per_page: LIMIT }),
  ]);
  return { sessions, tokens, enrollments, organizations, permissions };
}

/** One write button in a form of its own (CSRF token, optional hidden fields). */
function Action(props: { action: string; csrf: string; label: string; name?: string; fields?: Record<string, string>; danger?: boolean }) {
  return (
    <form method="post" action={props.action} class="inline">
      <Csrf token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.danger ? "danger" : "secondary"} aria-label={props.name}>
        {props.label}
      </button>
    </form>
  );
}

const deviceOf = (s: Session) => [s.device?.last_ip ?? s.device?.initial_ip, s.device?.last_user_agent ?? s.device?.initial_user_agent].filter(Boolean).join(" · ");

/** The sections, rendered inside the user's page. */
export function AccessSections(props: { c: ConsoleContext; tenant: string; userPath: string; identities: Identity[]; data: AccessData }) {
  const { c, tenant, data } = props;
  const base = tenantPath(tenant, props.userPath);
  const csrf = c.var.operator.csrf;
  const sessions = rowsOf<Session>(data.sessions, "sessions");
  const tokens = rowsOf<RefreshToken>(data.tokens, "tokens");
  const enrollments = rowsOf<Enrollment>(data.enrollments, "enrollments");
  const organizations = rowsOf<Organization>(data.organizations, "organizations");
  const permissions = rowsOf<Permission>(data.permissions, "permissions");
  const revokeSessions = can(c, "delete:sessions");
  const revokeTokens = can(c, "delete:refresh_tokens");
  const resetMfa = can(c, "delete:guardian_enrollments");
  const unlink = can(c, "update:users");
  const secondary = props.identities.slice(1);
  return (
    <>
      <h2>Sessions</h2>
      <ApiError message={data.sessions.error} />
      <DataTable
        caption="Live login sessions"
        rows={sessions}
        columns={[
          { label: "Session", cell: (s) => <code>{s.id}</code> },
          { label: "Started", cell: (s) => when(s.created_at) },
          { label: "Last used", cell: (s) => when(s.last_interacted_at) },
          { label: "Methods", cell: (s) => (s.authentication?.methods ?? []).map((m) => m.name).join(", ") },
          { label: "Device", cell: deviceOf },
          ...(revokeSessions
            ? [{ label: "Revoke", cell: (s: Session) => <Action action={`${base}/sessions/revoke`} csrf={csrf} label="Revoke" name={`Revoke session ${s.id}`} fields={{ session: s.id }} danger /> }]
            : []),
        ]}
        empty="No live session."
      />
      {revokeSessions && sessions.length > 1 ? <Action action={`${base}/sessions/revoke-all`} csrf={csrf} label="Revoke every session" danger /> : null}

      <h2>Refresh tokens</h2>
      <ApiError message={data.tokens.error} />
      <DataTable
        caption="Refresh tokens"
        rows={tokens}
        columns={[
          { label: "Application", cell: (t) => <code>{t.client_id}</code> },
          { label: "API", cell: (t) => (t.resource_servers ?? []).map((r) => r.audience).join(", ") },
          { label: "Issued", cell: (t) => when(t.created_at) },
          { label: "Last used", cell: (t) => when(t.last_exchanged_at) },
          { label: "Status", cell: (t) => (t.revoked_at ? `Revoked ${when(t.revoked_at)}` : "Active") },
          ...(revokeTokens
            ? [
                {
                  label: "Revoke",
                  cell: (t: RefreshToken) =>
                    t.revoked_at ? "" : <Action action={`${base}/refresh-tokens/revoke`} csrf={csrf} label="Revoke" name={`Revoke the refresh token of ${t.client_id} issued ${when(t.created_at)}`} fields={{ token: t.id }} danger />,
                },
              ]
            : []),
        ]}
        empty="No refresh token."
      />
      {revokeTokens && tokens.some((t) => !t.revoked_at) ? <Action action={`${base}/refresh-tokens/revoke-all`} csrf={csrf} label="Revoke every refresh token" danger /> : null}

      <h2>Multi-factor authentication</h2>
      <ApiError message={data.enrollments.error} />
      <DataTable
        caption="MFA enrollments"
        rows={enrollments}
        columns={[
          { label: "Type", cell: (e) => e.type },
          { label: "Name", cell: (e) => e.name ?? e.identifier ?? "" },
          { label: "Status", cell: (e) => e.status },
          { label: "Enrolled", cell: (e) => when(e.enrolled_at) },
        ]}
        empty="No MFA enrollment."
      />
      {resetMfa && enrollments.length ? <Action action={`${base}/mfa/reset`} csrf={csrf} label="Reset MFA (remove every authenticator)" danger /> : null}

      <h2>Linked identities</h2>
      <DataTable
        caption="Identities of this user (the first is the primary)"
        rows={props.identities}
        columns={[
          { label: "Connection", cell: (i) => i.connection },
          { label: "Provider", cell: (i) => i.provider },
          { label: "User ID", cell: (i) => <code>{i.user_id}</code> },
          ...(unlink && secondary.length
            ? [
                {
                  label: "Unlink",
                  cell: (i: Identity) =>
                    i === props.identities[0] ? "Primary" : <Action action={`${base}/identities/unlink`} csrf={csrf} label="Unlink" name={`Unlink ${i.provider} ${i.user_id}`} fields={{ provider: i.provider, identity: i.user_id }} danger />,
                },
              ]
            : []),
        ]}
      />

      <h2>Organizations</h2>
      <ApiError message={data.organizations.error} />
      <DataTable
        caption="Organizations this user is a member of"
        rows={organizations}
        columns={[
          { label: "Organization", cell: (o) => <a href={tenantPath(tenant, `/organizations/${encodeURIComponent(o.id)}`)}>{o.display_name ?? o.name}</a> },
          { label: "ID", cell: (o) => <code>{o.id}</code> },
        ]}
        empty="Not a member of any organization."
      />

      <h2>Permissions</h2>
      <ApiError message={data.permissions.error} />
      <DataTable
        caption="Permissions, direct and through roles"
        rows={permissions}
        columns={[
          { label: "Permission", cell: (p) => <code>{p.permission_name}</code> },
          { label: "API", cell: (p) => p.resource_server_identifier },
          { label: "From", cell: (p) => (p.sources ?? []).map((s) => (s.source_type === "ROLE" ? `role ${s.source_name ?? ""}` : "direct")).join(", ") },
        ]}
        empty="No permission."
      />
    </>
  );
}

type Outcome = { notice: string } | { error: string | null; status: number };

/** The writes of the section: each one API call, after a step-up when the last login is not recent. */
const WRITES: Record<string, (c: ConsoleContext, tenant: string, userPath: string, form: Record<string, unknown>) => Promise<Outcome>> = {
  "sessions/revoke": async (c, tenant, _path, form) => {
    const r = await c.var.api.delete(tenant, `/sessions/${encodeURIComponent(str(form.session))}`);
    return r.ok ? { notice: "Session revoked, with the refresh tokens issued under it." } : r;
  },
  "sessions/revoke-all": async (c, tenant, path) => {
    const r = await c.var.api.delete(tenant, `${path}/sessions`);
    return r.ok ? { notice: "Every session revoked." } : r;
  },
  "refresh-tokens/revoke": async (c, tenant, _path, form) => {
    const r = await c.var.api.delete(tenant, `/refresh-tokens/${encodeURIComponent(str(form.token))}`);
    return r.ok ? { notice: "Refresh token revoked." } : r;
  },
  "refresh-tokens/revoke-all": async (c, tenant, path) => {
    const r = await c.var.api.delete(tenant, `${path}/refresh-tokens`);
    return r.ok ? { notice: "Every refresh token revoked." } : r;
  },
  "mfa/reset": async (c, tenant, path) => {
    const r = await c.var.api.delete(tenant, `${path}/authenticators`);
    return r.ok ? { notice: "MFA reset: every authenticator removed." } : r;
  },
  "identities/unlink": async (c, tenant, path, form) => {
    const r = await c.var.api.delete(tenant, `${path}/identities/${encodeURIComponent(str(form.provider))}/${encodeURIComponent(str(form.identity))}`);
    return r.ok ? { notice: "Identity unlinked: it is a user of its own again." } : r;
  },
};

/** The write paths under /admin/t/:tenant/users/:id/ that this section answers. */
export const ACCESS_WRITES = Object.keys(WRITES);

/**
 * POST /admin/t/:tenant/users/:id/<write>: step-up first (back to the user's page), then the one API call;
 * the user's page is shown again with the outcome.
 */
export function accessWrite(write: string, render: (c: ConsoleContext, outcome: Outcome) => Promise<Response>) {
  return async (c: ConsoleContext): Promise<Response> => {
    const tenant = c.req.param("tenant") as string;
    const userPath = `/users/${encodeURIComponent(c.req.param("id") as string)}`;
    const stepUp = stepUpRequired(c, tenantPath(tenant, userPath));
    if (stepUp) return stepUp;
    const form = await c.req.parseBody();
    const run = WRITES[write];
    if (!run) return render(c, { error: "Unknown action.", status: 404 });
    return render(c, await run(c, tenant, userPath, form));
  };
}
