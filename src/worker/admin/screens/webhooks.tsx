import { DISPATCHABLE_TRIGGERS } from "../../../shared/schemas/hooks";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { type Outcome, outcomeOf, readStatus, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, Pager, pageOf, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

interface Hook {
  id: string;
  name: string;
  trigger_id: string;
  url: string;
  template_id?: string;
  enabled: boolean;
}
interface LogStream {
  id: string;
  name: string;
  type: string;
  status: string;
  sink?: { httpEndpoint?: string };
}
interface FailedEvent {
  id: string;
  event_type: string;
  retry_count: number;
  final_error: string | null;
  created_at: string;
  dead_lettered_at: string;
}

const PER_PAGE = 50;
const idOf = (c: ConsoleContext) => encodeURIComponent(c.req.param("id") as string);

/** GET /admin/t/:tenant/webhooks: webhooks (GET /hooks), the create form, and failed events with retry (GET /failed-events). */
export async function webhooksScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const page = pageOf(c.req.query("page"));
  const [hooks, failed, streams] = await Promise.all([
    c.var.api.get<{ hooks: Hook[] }>(tenant, "/hooks", { per_page: 100, include_totals: true }),
    c.var.api.get<{ events: FailedEvent[]; total: number }>(tenant, "/failed-events", { page, per_page: PER_PAGE, include_totals: true }),
    c.var.api.get<LogStream[]>(tenant, "/log-streams"),
  ]);
  const base = tenantPath(tenant, "/webhooks");
  const csrf = c.var.operator.csrf;
  const events = failed.ok ? failed.body.events : [];
  const mayDelete = can(c, "delete:hooks");
  const mayUpdate = can(c, "update:hooks");
  const mayRetry = can(c, "update:failed_events");
  return sendConsolePage(
    c,
    shellOf(c, "Webhooks", { tenant, section: "webhooks" }),
    <>
      <h1>Webhooks</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? hooks.error ?? failed.error ?? streams.error} />
      <DataTable
        caption={`Webhooks of ${tenant}`}
        rows={hooks.ok ? hooks.body.hooks : []}
        columns={[
          { label: "Name", cell: (h) => <a href={`${base}/${encodeURIComponent(h.id)}`}>{h.name}</a> },
          { label: "Trigger", cell: (h) => <code>{h.trigger_id}</code> },
          { label: "URL", cell: (h) => (h.template_id ? `template: ${h.template_id}` : <code>{h.url}</code>) },
          {
            label: "Enabled",
            cell: (h) =>
              mayUpdate ? (
                <form method="post" action={`${base}/${encodeURIComponent(h.id)}/enabled`} class="inline">
                  <Csrf token={csrf} />
                  <input type="hidden" name="enabled" value={String(!h.enabled)} />
                  {h.enabled ? "Yes " : "No "}
                  <button type="submit" class="secondary" aria-label={`${h.enabled ? "Disable" : "Enable"} webhook ${h.name}`}>
                    {h.enabled ? "Disable" : "Enable"}
                  </button>
                </form>
              ) : h.enabled ? (
                "Yes"
              ) : (
                "No"
              ),
          },
          ...(mayDelete
            ? [
                {
                  label: "Delete",
                  cell: (h: Hook) => (
                    <form method="post" action={`${base}/${encodeURIComponent(h.id)}/delete`} class="inline">
                      <Csrf token={csrf} />
                      <button type="submit" class="danger" aria-label={`Delete webhook ${h.name}`}>
                        Delete
                      </button>
                    </form>
                  ),
                },
              ]
            : []),
        ]}
        empty="No webhook yet."
      />
      {can(c, "create:hooks") ? (
        <>
          <h2>Add a webhook</h2>
          <form method="post" action={base} class="card">
            <Csrf token={csrf} />
            <Field name="name" label="Name" hint="Letters, digits, spaces and dashes; generated when empty." />
            <div class="field">
              <label for="f-trigger_id">Trigger</label>
              <select id="f-trigger_id" name="trigger_id">
                {DISPATCHABLE_TRIGGERS.map((t) => (
                  <option value={t}>{t}</option>
                ))}
              </select>
            </div>
            <Field name="url" label="URL" type="url" required hint="Gatehouse POSTs each event here, signed, and retries with back-off." />
            <button type="submit">Add webhook</button>
          </form>
        </>
      ) : null}
      <h2>Log streams</h2>
      <p>
        <a href={tenantPath(tenant, "/log-streams")}>Manage log streams</a>
      </p>
      <DataTable
        caption={`Log streams of ${tenant} (created through /api/v2/log-streams; credentials are never shown)`}
        rows={streams.ok && Array.isArray(streams.body) ? streams.body : []}
        columns={[
          { label: "Name", cell: (l) => l.name },
          { label: "Type", cell: (l) => l.type },
          { label: "Status", cell: (l) => l.status },
          { label: "Endpoint", cell: (l) => <code>{l.sink?.httpEndpoint ?? ""}</code> },
        ]}
        empty="No log stream."
      />
      <h2>Failed events</h2>
      <p class="muted">Events the relay gave up on after its retries. Retrying puts an event back in the queue, delivered with its original id.</p>
      <DataTable
        caption={`Failed events of ${tenant}`}
        rows={events}
        columns={[
          { label: "Event", cell: (e) => <code>{e.event_type}</code> },
          { label: "Created", cell: (e) => when(e.created_at) },
          { label: "Given up", cell: (e) => when(e.dead_lettered_at) },
          { label: "Attempts", cell: (e) => String(e.retry_count) },
          { label: "Last error", cell: (e) => e.final_error ?? "" },
          ...(mayRetry
            ? [
                {
                  label: "Retry",
                  cell: (e: FailedEvent) => (
                    <form method="post" action={`${base}/failed/${encodeURIComponent(e.id)}/retry`} class="inline">
                      <Csrf token={csrf} />
                      <button type="submit" class="secondary" aria-label={`Retry event ${e.id}`}>
                        Retry
                      </button>
                    </form>
                  ),
                },
              ]
            : []),
        ]}
        empty="No failed event."
      />
      {failed.ok && failed.body.total > PER_PAGE ? <Pager base={base} page={page} perPage={PER_PAGE} total={failed.body.total} /> : null}
    </>,
    outcome.status ?? readStatus(hooks, failed),
  );
}

/** POST .../webhooks: POST /hooks (trigger_id, url, name when given). */
export async function createWebhook(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const name = str(form.name).trim();
  const body = { trigger_id: str(form.trigger_id), url: str(form.url).trim(), ...(name ? { name } : {}) };
  const created = await c.var.api.post<Hook>(tenantOf(c), "/hooks", body);
  if (!created.ok) return webhooksScreen(c, { error: created.error, status: statusOf(created.status) });
  return webhooksScreen(c, { notice: `Webhook ${created.body.name} added.`, status: 201 });
}

/** POST .../webhooks/:id/delete: DELETE /hooks/{id}. */
export async function deleteWebhook(c: ConsoleContext): Promise<Response> {
  return webhooksScreen(c, outcomeOf(await c.var.api.delete(tenantOf(c), `/hooks/${idOf(c)}`), "Webhook deleted."));
}

/** POST .../webhooks/:id/enabled: PATCH /hooks/{id} with `enabled`. */
export async function enableWebhook(c: ConsoleContext): Promise<Response> {
  const enabled = str((await c.req.parseBody()).enabled) === "true";
  const patched = await c.var.api.patch(tenantOf(c), `/hooks/${idOf(c)}`, { enabled });
  return webhooksScreen(c, outcomeOf(patched, enabled ? "Webhook enabled." : "Webhook disabled."));
}

/** POST .../webhooks/failed/:id/retry: POST /failed-events/{id}/retry. */
export async function retryFailedEvent(c: ConsoleContext): Promise<Response> {
  return webhooksScreen(c, outcomeOf(await c.var.api.post(tenantOf(c), `/failed-events/${idOf(c)}/retry`), "Event queued again for delivery."));
}

/**
 * GET /admin/t/:tenant/webhooks/:id: one webhook (GET /hooks/{id}) and, with update:hooks, its edit form (name,
 * trigger, URL, enabled) saved with PATCH /hooks/{id}. A refused save shows the API's message and the values typed.
 */
export async function webhookScreen(c: ConsoleContext, outcome: Outcome & { typed?: Partial<Hook> } = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const read = await c.var.api.get<Hook>(tenant, `/hooks/${idOf(c)}`);
  const base = tenantPath(tenant, "/webhooks");
  const hook = read.ok ? { ...read.body, ...outcome.typed } : null;
  const mayUpdate = can(c, "update:hooks");
  return sendConsolePage(
    c,
    shellOf(c, hook ? `Webhook ${hook.name}` : "Webhook", { tenant, section: "webhooks" }),
    <>
      <p>
        <a href={base}>All webhooks</a>
      </p>
      <h1>{hook ? `Webhook ${read.body.name}` : "Webhook"}</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? read.error} />
      {hook && mayUpdate ? (
        <form method="post" action={`${base}/${idOf(c)}`} class="card">
          <Csrf token={c.var.operator.csrf} />
          <Field name="name" label="Name" value={hook.name} required hint="Letters, digits, spaces and dashes." />
          <div class="field">
            <label for="f-trigger_id">Trigger</label>
            <select id="f-trigger_id" name="trigger_id">
              {DISPATCHABLE_TRIGGERS.map((t) => (
                <option value={t} selected={t === hook.trigger_id}>
                  {t}
                </option>
              ))}
            </select>
          </div>
          {hook.template_id ? (
            <p class="muted">Template: {hook.template_id} (built-in code, no URL).</p>
          ) : (
            <Field name="url" label="URL" type="url" value={hook.url} required hint="Gatehouse POSTs each event here, signed." />
          )}
          <div class="field">
            <label>
              <input type="checkbox" name="enabled" value="true" checked={hook.enabled} /> Enabled
            </label>
          </div>
          <button type="submit">Save webhook</button>
        </form>
      ) : hook ? (
        <dl class="pairs card">
          <dt>Trigger</dt>
          <dd>
            <code>{hook.trigger_id}</code>
          </dd>
          <dt>URL</dt>
          <dd>{hook.template_id ? `template: ${hook.template_id}` : <code>{hook.url}</code>}</dd>
          <dt>Enabled</dt>
          <dd>{hook.enabled ? "Yes" : "No"}</dd>
        </dl>
      ) : null}
    </>,
    outcome.status ?? readStatus(read),
  );
}

/** POST .../webhooks/:id: PATCH /hooks/{id} with name, trigger_id, url (not for a template hook) and enabled. */
export async function updateWebhook(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const typed = { name: str(form.name).trim(), trigger_id: str(form.trigger_id), enabled: form.enabled === "true", ...(form.url !== undefined ? { url: str(form.url).trim() } : {}) };
  const patched = await c.var.api.patch<Hook>(tenantOf(c), `/hooks/${idOf(c)}`, typed);
  return webhookScreen(c, patched.ok ? { notice: "Webhook saved." } : { error: patched.error, status: statusOf(patched.status), typed });
}
