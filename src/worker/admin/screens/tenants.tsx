import { CONSOLE_PATH } from "../../../shared/console";
import type { ConsoleContext } from "../context";
import { Csrf } from "../pages/layout";
import { ApiError, Field, Pager, pageOf, str, tenantPath, when } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";

interface Tenant {
  id: string;
  name?: string;
  friendly_name?: string | null;
  deployment_type?: string;
  created_at?: string;
}

const PER_PAGE = 50;

/** GET /admin/tenants: every tenant the operator may reach, paged; jump to one by id; create one. */
export async function tenantsScreen(c: ConsoleContext, error: string | null = null, status: 200 | 400 | 403 | 404 | 409 = 200): Promise<Response> {
  const page = pageOf(c.req.query("page"));
  const list = await c.var.api.get<{ tenants: Tenant[]; total: number }>(null, "/tenants", { page, per_page: PER_PAGE, include_totals: true });
  const tenants = list.ok ? list.body.tenants : [];
  const shell = shellOf(c, "Tenants");
  const csrf = c.var.operator.csrf;
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Tenants</h1>
      <ApiError message={error ?? list.error} />
      <form method="get" action={`${CONSOLE_PATH}/tenants/go`} class="row card">
        <div class="field">
          <label for="f-tenant">Go to a tenant by id</label>
          <input id="f-tenant" name="tenant" required />
        </div>
        <div class="field">
          <button type="submit" class="secondary">
            Open
          </button>
        </div>
      </form>
      <table>
        <caption class="muted">Tenants you may manage</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Name</th>
            <th scope="col">Deployment</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {tenants.map((t) => (
            <tr>
              <td>
                <a href={tenantPath(t.id, "/applications")}>{t.id}</a>
              </td>
              <td>{t.friendly_name ?? t.name ?? ""}</td>
              <td>{t.deployment_type ?? "shared"}</td>
              <td>{when(t.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.ok ? <Pager base={`${CONSOLE_PATH}/tenants`} page={page} perPage={PER_PAGE} total={list.body.total ?? tenants.length} /> : null}
      <h2>Create a tenant</h2>
      <form method="post" action={`${CONSOLE_PATH}/tenants`} class="card">
        <Csrf token={csrf} />
        <Field name="id" label="Tenant id" required hint="Lowercase letters, digits and hyphens; it names the tenant's host." />
        <Field name="friendly_name" label="Display name" />
        <button type="submit">Create tenant</button>
      </form>
    </>,
    status,
  );
}

/** GET /admin/tenants/go?tenant=: the tenant's applications (the API says whether the operator may see it). */
export function goToTenant(c: ConsoleContext): Response {
  const id = (c.req.query("tenant") ?? "").trim();
  return c.redirect(id ? tenantPath(id, "/applications") : `${CONSOLE_PATH}/tenants`, 302);
}

/** POST /admin/tenants: POST /api/v2/tenants, then the new tenant's screens. */
export async function createTenant(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const body = { id: str(form.id).trim(), ...(str(form.friendly_name).trim() ? { friendly_name: str(form.friendly_name).trim() } : {}) };
  const created = await c.var.api.post<Tenant>(null, "/tenants", body);
  if (!created.ok) return tenantsScreen(c, created.error, created.status === 403 ? 403 : created.status === 409 ? 409 : 400);
  return c.redirect(tenantPath(created.body.id, "/applications"), 303);
}
