import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Field, Pager, pageOf, str, tenantPath } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";
import { readStatus, type Status } from "../pages/outcome";

type Row = Record<string, unknown>;

/** A column of a list: its heading and how a row shows in it. */
interface Column {
  label: string;
  value: (row: Row) => string;
}

/** A list screen over one `/api/v2` collection, with an optional create form posting its fields as they are. */
interface ListSpec {
  key: string;
  title: string;
  path: string;
  /** The collection's key in the paged envelope. */
  collection: string;
  columns: Column[];
  create?: { label: string; scope: string; fields: { name: string; label: string; required?: boolean; hint?: string }[] };
  /** The row's own page under this screen, by the row's id (its first column links there). */
  linkBy?: string;
}

const PER_PAGE = 50;
const text = (key: string) => (row: Row) => (row[key] === undefined || row[key] === null ? "" : String(row[key]));

const SPECS: ListSpec[] = [
  {
    key: "apis",
    title: "APIs",
    path: "/resource-servers",
    collection: "resource_servers",
    linkBy: "id",
    columns: [
      { label: "Name", value: text("name") },
      { label: "Identifier", value: text("identifier") },
      { label: "Signing algorithm", value: text("signing_alg") },
      { label: "RBAC", value: (r) => (r.enforce_policies ? "On" : "Off") },
    ],
    create: {
      label: "Create an API",
      scope: "create:resource_servers",
      fields: [
        { name: "name", label: "Name", required: true },
        { name: "identifier", label: "Identifier", required: true, hint: "The audience value, usually a URL; it cannot change later." },
      ],
    },
  },
  {
    key: "roles",
    title: "Roles",
    path: "/roles",
    collection: "roles",
    linkBy: "id",
    columns: [
      { label: "Name", value: text("name") },
      { label: "Description", value: text("description") },
      { label: "Id", value: text("id") },
    ],
    create: {
      label: "Create a role",
      scope: "create:roles",
      fields: [
        { name: "name", label: "Name", required: true },
        { name: "description", label: "Description" },
      ],
    },
  },
  {
    key: "organizations",
    title: "Organizations",
    path: "/organizations",
    collection: "organizations",
    linkBy: "id",
    columns: [
      { label: "Name", value: text("name") },
      { label: "Display name", value: text("display_name") },
      { label: "Id", value: text("id") },
    ],
    create: {
      label: "Create an organization",
      scope: "create:organizations",
      fields: [
        { name: "name", label: "Name", required: true, hint: "Lowercase letters, digits, hyphens and underscores." },
        { name: "display_name", label: "Display name" },
      ],
    },
  },
  {
    key: "connections",
    title: "Connections",
    path: "/connections",
    collection: "connections",
    linkBy: "id",
    columns: [
      { label: "Name", value: text("name") },
      { label: "Strategy", value: text("strategy") },
      { label: "Applications", value: (r) => String(Array.isArray(r.enabled_clients) ? r.enabled_clients.length : 0) },
    ],
  },
];


async function listScreen(c: ConsoleContext, spec: ListSpec, error: string | null = null, status: Status = 200): Promise<Response> {
  const tenant = c.req.param("tenant") as string;
  const page = pageOf(c.req.query("page"));
  const list = await c.var.api.get<Record<string, unknown>>(tenant, spec.path, { page, per_page: PER_PAGE, include_totals: true });
  const rows = list.ok && Array.isArray(list.body[spec.collection]) ? (list.body[spec.collection] as Row[]) : [];
  const total = list.ok && typeof list.body.total === "number" ? list.body.total : rows.length;
  const shell = shellOf(c, spec.title, { tenant, section: spec.key });
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>{spec.title}</h1>
      <ApiError message={error ?? list.error} />
      <DataTable
        caption={`${spec.title} of ${tenant}`}
        rows={rows}
        columns={spec.columns.map((col, i) => ({
          label: col.label,
          cell: (row: Row) =>
            i === 0 && spec.linkBy ? <a href={tenantPath(tenant, `/${spec.key}/${encodeURIComponent(String(row[spec.linkBy]))}`)}>{col.value(row)}</a> : col.value(row),
        }))}
      />
      {list.ok ? <Pager base={tenantPath(tenant, `/${spec.key}`)} page={page} perPage={PER_PAGE} total={total} /> : null}
      {spec.create && can(c, spec.create.scope) ? (
        <>
          <h2>{spec.create.label}</h2>
          <form method="post" action={tenantPath(tenant, `/${spec.key}`)} class="card">
            <Csrf token={c.var.operator.csrf} />
            {spec.create.fields.map((f) => (
              <Field name={f.name} label={f.label} required={f.required} {...(f.hint ? { hint: f.hint } : {})} />
            ))}
            <button type="submit">{spec.create.label}</button>
          </form>
        </>
      ) : null}
    </>,
    status === 200 ? readStatus(list) : status,
  );
}

/** POST to a list screen: the create form's non-empty fields, as the API's body. */
async function createFrom(c: ConsoleContext, spec: ListSpec): Promise<Response> {
  const form = await c.req.parseBody();
  const body: Record<string, string> = {};
  for (const f of spec.create?.fields ?? []) {
    const value = str(form[f.name]).trim();
    if (value) body[f.name] = value;
  }
  const created = await c.var.api.post(c.req.param("tenant") as string, spec.path, body);
  if (!created.ok) return listScreen(c, spec, created.error, created.status === 403 || created.status === 409 ? created.status : 400);
  return c.redirect(tenantPath(c.req.param("tenant") as string, `/${spec.key}`), 303);
}

/** The list screens (GET) and their create forms (POST), for the console's route table. */
export const listScreens = SPECS.map((spec) => ({
  key: spec.key,
  handler: (c: ConsoleContext) => listScreen(c, spec),
  create: spec.create ? (c: ConsoleContext) => createFrom(c, spec) : null,
}));
