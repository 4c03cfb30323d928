import type { ConsoleContext } from "../context";
import { type Status, statusOf } from "../pages/outcome";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Field, Notice, str, tenantPath, when } from "../pages/parts";
import { sendConsoleError, sendConsolePage, shellOf } from "../render";

interface Organization {
  id: string;
  name: string;
  display_name?: string;
}
interface Member {
  user_id: string;
  email?: string;
  name?: string;
}
interface Invitation {
  id: string;
  invitee?: { email?: string };
  created_at?: string;
  expires_at?: string;
  invitation_url?: string;
}
interface Client {
  client_id: string;
  name: string;
}

/** A list answer as an array, whether the API sent the bare array or its paged envelope. */
function rowsOf<T>(body: unknown, key: string): T[] {
  if (Array.isArray(body)) return body as T[];
  const inner = body && typeof body === "object" ? (body as Record<string, unknown>)[key] : undefined;
  return Array.isArray(inner) ? (inner as T[]) : [];
}

const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;
const orgPath = (c: ConsoleContext) => `/organizations/${encodeURIComponent(c.req.param("id") as string)}`;

/** GET /admin/t/:tenant/organizations/:id: the organization, its members and its invitations (create one). */
export async function organizationScreen(c: ConsoleContext, options: { error?: string | null; notice?: string; status?: Status } = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const api = c.var.api;
  const path = orgPath(c);
  const read = await api.get<Organization>(tenant, path);
  // The API's refusal (403 without read:organizations, 404 for an unknown id) is the page's answer.
  if (!read.ok) return sendConsoleError(c, statusOf(read.status), "Organization", read.error ?? "The organization could not be read.", tenantPath(tenant, "/organizations"));
  const [members, invitations, clients] = await Promise.all([
    api.get(tenant, `${path}/members`, { per_page: 100 }),
    api.get(tenant, `${path}/invitations`, { per_page: 100 }),
    api.get(tenant, "/clients", { per_page: 100 }),
  ]);
  const org = read.body;
  const base = tenantPath(tenant, path);
  const csrf = c.var.operator.csrf;
  const shell = shellOf(c, org.display_name ?? org.name, { tenant, section: "organizations" });
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/organizations")}>All organizations</a>
      </p>
      <h1>{org.display_name ?? org.name}</h1>
      <Notice message={options.notice} />
      <ApiError message={options.error} />
      <p class="muted">
        Name: <code>{org.name}</code> · Id: <code>{org.id}</code>
      </p>
      <h2>Members</h2>
      <ApiError message={members.error} />
      <ul>
        {rowsOf<Member>(members.body, "members").map((m) => (
          <li>{m.email ?? m.name ?? m.user_id}</li>
        ))}
      </ul>
      <h2>Invitations</h2>
      <ApiError message={invitations.error} />
      <table>
        <caption class="muted">Pending invitations</caption>
        <thead>
          <tr>
            <th scope="col">Invitee</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
          </tr>
        </thead>
        <tbody>
          {rowsOf<Invitation>(invitations.body, "invitations").map((i) => (
            <tr>
              <td>{i.invitee?.email ?? ""}</td>
              <td>{when(i.created_at)}</td>
              <td>{when(i.expires_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {can(c, "create:organization_invitations") ? (
        <form method="post" action={`${base}/invitations`} class="card">
          <Csrf token={csrf} />
          <Field name="invitee" label="Invitee email" type="email" required />
          <Field name="inviter" label="Inviter name" value={c.var.operator.name} required />
          <div class="field">
            <label for="f-client">Application the invitee logs in to</label>
            <select id="f-client" name="client_id">
              {rowsOf<Client>(clients.body, "clients").map((x) => (
                <option value={x.client_id}>{x.name}</option>
              ))}
            </select>
          </div>
          <button type="submit">Send invitation</button>
        </form>
      ) : null}
    </>,
    options.status ?? 200,
  );
}

/** POST /admin/t/:tenant/organizations/:id/invitations: POST /organizations/{id}/invitations. */
export async function createInvitation(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const body = { invitee: { email: str(form.invitee).trim() }, inviter: { name: str(form.inviter).trim() }, client_id: str(form.client_id) };
  const created = await c.var.api.post<Invitation>(tenantOf(c), `${orgPath(c)}/invitations`, body);
  if (!created.ok) return organizationScreen(c, { error: created.error, status: statusOf(created.status) });
  return organizationScreen(c, { notice: `Invitation sent to ${body.invitee.email}.`, status: 201 });
}
