import { CONSOLE_PATH } from "../../../shared/console";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { type Outcome, outcomeOf, readStatus, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, Pager, pageOf, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

interface Tenant {
  id: string;
  name?: string;
  friendly_name?: string | null;
  sender_name?: string | null;
  sender_email?: string | null;
  deployment_type?: string;
  created_at?: string;
}

/**
 * Where a tenant opens: its applications, or, for an operator who may not read them (a tenant admin logged in
 * through the tenant's organization on the control plane: read:tenants and update:tenants of that tenant
 * only, issue 15 point 3), its details.
 */
const tenantEntry = (c: ConsoleContext, id: string) => tenantPath(id, can(c, "read:clients") ? "/applications" : "/details");

const PER_PAGE = 50;

/**
 * GET /admin/tenants: the tenant switcher (issue 30): the session's recent tenants, then every tenant the
 * operator may reach, searched on the server (`name_filter`) and paged, so hundreds stay usable; jump to one
 * by id; create one.
 */
export async function tenantsScreen(c: ConsoleContext, error: string | null = null, status: 200 | 400 | 403 | 404 | 409 = 200): Promise<Response> {
  const page = pageOf(c.req.query("page"));
  const search = (c.req.query("q") ?? "").trim().slice(0, 200);
  const list = await c.var.api.get<{ tenants: Tenant[]; total: number }>(null, "/tenants", { page, per_page: PER_PAGE, include_totals: true, name_filter: search });
  const tenants = list.ok ? list.body.tenants : [];
  const shell = shellOf(c, "Tenants");
  const csrf = c.var.operator.csrf;
  const recent = c.var.operator.recentTenants;
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Tenants</h1>
      <ApiError message={error ?? list.error} />
      {recent.length ? (
        <nav aria-labelledby="recent-tenants" class="card">
          <h2 id="recent-tenants">Recent tenants</h2>
          <ul class="inline-list">
            {recent.map((id) => (
              <li>
                <a href={tenantPath(id, "/home")}>{id}</a>
              </li>
            ))}
          </ul>
        </nav>
      ) : null}
      <form method="get" action={`${CONSOLE_PATH}/tenants`} class="row card">
        <div class="field">
          <label for="f-q">Find a tenant</label>
          <input id="f-q" name="q" type="search" value={search} aria-describedby="h-q" />
          <p class="hint" id="h-q">
            Part of the id, name or display name.
          </p>
        </div>
        <div class="field">
          <button type="submit" class="secondary">
            Search
          </button>
        </div>
      </form>
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
      <DataTable
        caption={search ? `Tenants matching “${search}”` : "Tenants you may manage"}
        rows={tenants}
        columns={[
          { label: "Id", cell: (t) => <a href={tenantEntry(c, t.id)}>{t.id}</a> },
          { label: "Name", cell: (t) => t.friendly_name ?? t.name ?? "" },
          { label: "Deployment", cell: (t) => t.deployment_type ?? "shared" },
          { label: "Created", cell: (t) => when(t.created_at) },
        ]}
      />
      {list.ok && !tenants.length ? <p class="muted">{search ? "No tenant matches this search." : "No tenant yet."}</p> : null}
      {list.ok ? <Pager base={`${CONSOLE_PATH}/tenants`} page={page} perPage={PER_PAGE} total={list.body.total ?? tenants.length} extra={search ? { q: search } : {}} /> : null}
      {can(c, "create:tenants") ? (
        <>
          <h2>Create a tenant</h2>
          <form method="post" action={`${CONSOLE_PATH}/tenants`} class="card">
            <Csrf token={csrf} />
            <Field name="id" label="Tenant id" required hint="Lowercase letters, digits and hyphens; it names the tenant's host." />
            <Field name="friendly_name" label="Display name" />
            <button type="submit">Create tenant</button>
          </form>
        </>
      ) : null}
    </>,
    status,
  );
}

/** GET /admin/tenants/go?tenant=: the tenant's applications (the API says whether the operator may see it). */
export function goToTenant(c: ConsoleContext): Response {
  const id = (c.req.query("tenant") ?? "").trim();
  return c.redirect(id ? tenantEntry(c, id) : `${CONSOLE_PATH}/tenants`, 302);
}

/** POST /admin/tenants: POST /api/v2/tenants, then the new tenant's screens. */
export async function createTenant(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const body = { id: str(form.id).trim(), ...(str(form.friendly_name).trim() ? { friendly_name: str(form.friendly_name).trim() } : {}) };
  const created = await c.var.api.post<Tenant>(null, "/tenants", body);
  if (!created.ok) return tenantsScreen(c, created.error, created.status === 403 ? 403 : created.status === 409 ? 409 : 400);
  return c.redirect(tenantPath(created.body.id, "/applications"), 303);
}

/** The registry fields a tenant admin may change too (the API's rule for an organization member's token). */
const DETAILS = [
  ["name", "Name"],
  ["friendly_name", "Display name"],
  ["sender_name", "Sender name of the tenant's emails"],
  ["sender_email", "Sender address of the tenant's emails"],
] as const;

/** GET /admin/t/:tenant/details: the tenant's record (GET /tenants/{id}), a form when the operator may change it. */
export async function tenantDetailsScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const read = await c.var.api.get<Tenant>(null, `/tenants/${encodeURIComponent(tenant)}`);
  const record: Partial<Tenant> = read.ok ? read.body : {};
  const editable = read.ok && can(c, "update:tenants");
  const fields = (
    <fieldset disabled={!editable} class="plain">
      <legend>Tenant {tenant}</legend>
      {DETAILS.map(([name, label]) => (
        <Field name={name} label={label} value={String(record[name] ?? "")} />
      ))}
    </fieldset>
  );
  return sendConsolePage(
    c,
    shellOf(c, "Tenant details", { tenant, section: "details" }),
    <>
      <h1>Tenant details</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? read.error} />
      {read.ok ? <p class="muted">Deployment: {record.deployment_type ?? "shared"} · created {when(record.created_at)}</p> : null}
      {editable ? (
        <form method="post" action={tenantPath(tenant, "/details")} class="card">
          <Csrf token={c.var.operator.csrf} />
          {fields}
          <button type="submit">Save details</button>
        </form>
      ) : read.ok ? (
        <div class="card">{fields}</div>
      ) : null}
    </>,
    outcome.status ?? readStatus(read),
  );
}

/** POST .../details: PATCH /tenants/{id} with the fields given (an empty field is left as it is). */
export async function saveTenantDetails(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const body: Record<string, string> = {};
  for (const [name] of DETAILS) {
    const value = str(form[name]).trim();
    if (value) body[name] = value;
  }
  return tenantDetailsScreen(c, outcomeOf(await c.var.api.patch(null, `/tenants/${encodeURIComponent(tenantOf(c))}`, body), "Details saved."));
}
