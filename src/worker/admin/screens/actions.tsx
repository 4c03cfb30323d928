import { ACTION_TRIGGERS } from "../../../shared/actions/triggers";
import { readStatus, type Status, statusOf } from "../pages/outcome";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Field, Notice, str, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";

interface Action {
  id: string;
  name: string;
  code?: string;
  status?: string;
  all_changes_deployed?: boolean;
  supported_triggers?: { id: string; version?: string }[];
}

/** The editor's client script (CodeMirror 6, bundled into the worker's static assets; a textarea without it). */
export const EDITOR_SCRIPT = "/admin/assets/editor.js";

const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;
const STARTER = "exports.onExecutePostLogin = async (event, api) => {\n  // api.accessToken.setCustomClaim(\"https://example.com/plan\", \"gold\");\n};\n";

/** GET /admin/t/:tenant/actions: the list (GET /actions/actions) and the create form. */
export async function actionsScreen(c: ConsoleContext, error: string | null = null, status: Status = 200): Promise<Response> {
  const tenant = tenantOf(c);
  const list = await c.var.api.get<{ actions: Action[] }>(tenant, "/actions/actions", { per_page: 100 });
  const actions = list.ok ? list.body.actions : [];
  const shell = shellOf(c, "Actions", { tenant, section: "actions" });
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Actions</h1>
      <ApiError message={error ?? list.error} />
      <table>
        <caption class="muted">Actions of {tenant}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Trigger</th>
            <th scope="col">Deployed</th>
          </tr>
        </thead>
        <tbody>
          {actions.map((a) => (
            <tr>
              <td>
                <a href={tenantPath(tenant, `/actions/${encodeURIComponent(a.id)}`)}>{a.name}</a>
              </td>
              <td>{(a.supported_triggers ?? []).map((t) => t.id).join(", ")}</td>
              <td>{a.all_changes_deployed ? "Yes" : "No"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Bindings</h2>
      <p>
        What runs at each trigger, in order:{" "}
        {ACTION_TRIGGERS.map((t) => (
          <>
            <a href={tenantPath(tenant, `/triggers/${encodeURIComponent(t.id)}`)}>{t.id}</a>{" "}
          </>
        ))}
      </p>
      {can(c, "create:actions") ? (
        <>
          <h2>Create an action</h2>
          <form method="post" action={tenantPath(tenant, "/actions")} class="card">
            <Csrf token={c.var.operator.csrf} />
            <Field name="name" label="Name" required />
            <div class="field">
              <label for="f-trigger">Trigger</label>
              <select id="f-trigger" name="trigger">
                {ACTION_TRIGGERS.map((t) => (
                  <option value={`${t.id}@${t.version}`}>{t.id}</option>
                ))}
              </select>
            </div>
            <button type="submit">Create action</button>
          </form>
        </>
      ) : null}
    </>,
    status === 200 ? readStatus(list) : status,
  );
}

/** POST /admin/t/:tenant/actions: POST /actions/actions with a starter handler. */
export async function createAction(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const [id = "", version] = str(form.trigger).split("@");
  const handler = ACTION_TRIGGERS.find((t) => t.id === id)?.handler ?? "onExecutePostLogin";
  const body = {
    name: str(form.name).trim(),
    supported_triggers: [{ id, ...(version ? { version } : {}) }],
    code: STARTER.replace("onExecutePostLogin", handler),
  };
  const created = await c.var.api.post<Action>(tenantOf(c), "/actions/actions", body);
  if (!created.ok) return actionsScreen(c, created.error, statusOf(created.status));
  return c.redirect(tenantPath(tenantOf(c), `/actions/${encodeURIComponent(created.body.id)}`), 303);
}

/** GET /admin/t/:tenant/actions/:id: the code editor (a textarea, enhanced by CodeMirror), save, deploy. */
export async function actionScreen(
  c: ConsoleContext,
  options: { action?: Action; error?: string | null; notice?: string; status?: Status; code?: string; test?: TestRun } = {},
): Promise<Response> {
  const tenant = tenantOf(c);
  let action = options.action;
  const id = action?.id ?? (c.req.param("id") as string);
  if (!action) {
    const read = await c.var.api.get<Action>(tenant, `/actions/actions/${encodeURIComponent(id)}`);
    if (!read.ok) return actionsScreen(c, read.error, statusOf(read.status));
    action = read.body;
  }
  const base = tenantPath(tenant, `/actions/${encodeURIComponent(id)}`);
  const csrf = c.var.operator.csrf;
  const shell = shellOf(c, action.name, { tenant, section: "actions", scripts: [EDITOR_SCRIPT] });
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/actions")}>All actions</a>
      </p>
      <h1>{action.name}</h1>
      <Notice message={options.notice} />
      <ApiError message={options.error} />
      <p class="muted">
        Trigger: {(action.supported_triggers ?? []).map((t) => t.id).join(", ")} · {action.all_changes_deployed ? "All changes deployed" : "Draft has undeployed changes"}
      </p>
      {can(c, "update:actions") ? (
        <form method="post" action={base} class="card">
          <Csrf token={csrf} />
          <div class="field">
            <label for="f-code">Code</label>
            <textarea id="f-code" name="code" class="code" data-editor="javascript" spellcheck={false}>
              {options.code ?? action.code ?? ""}
            </textarea>
          </div>
          <button type="submit">Save draft</button>
        </form>
      ) : (
        <div class="card">
          <h2>Code</h2>
          <pre>{action.code ?? ""}</pre>
        </div>
      )}
      {can(c, "create:actions") ? (
        <form method="post" action={`${base}/deploy`} class="card">
          <Csrf token={csrf} />
          <button type="submit" class="secondary">
            Deploy
          </button>
        </form>
      ) : null}
      {can(c, "create:actions") ? (
        <form method="post" action={`${base}/test`} class="card">
          <Csrf token={csrf} />
          <h2>Test run</h2>
          <div class="field">
            <label for="f-event">Event (JSON): the draft runs once in the sandbox with it; nothing is stored</label>
            <textarea id="f-event" name="event" class="code" spellcheck={false}>
              {options.test?.event ?? SAMPLE_EVENT}
            </textarea>
          </div>
          <button type="submit" class="secondary">
            Run the draft
          </button>
        </form>
      ) : null}
      {options.test?.result ? (
        <section class="card" aria-live="polite">
          <h2>Test result</h2>
          <p>{options.test.result.error ? `Failed: ${options.test.result.error.msg}` : `Ran in ${options.test.result.duration_ms} ms.`}</p>
          <h3>What the action asked for</h3>
          <pre>{JSON.stringify(options.test.result.commands ?? [], null, 2)}</pre>
          <h3>Console output</h3>
          <pre>{options.test.result.logs || "(none)"}</pre>
        </section>
      ) : null}
    </>,
    options.status ?? 200,
  );
}

/** What the test route answers (POST /actions/actions/{id}/test → `payload`). */
interface TestResult {
  logs?: string;
  error: { id: string; msg: string } | null;
  commands?: unknown[];
  duration_ms?: number;
}
interface TestRun {
  event: string;
  result?: TestResult;
}

/** The event a test run starts from: the fields a post-login action reads most. */
const SAMPLE_EVENT = JSON.stringify(
  { user: { user_id: "auth0|test-user", email: "test@example.com", email_verified: true, app_metadata: {}, user_metadata: {} }, request: { ip: "203.0.113.7", hostname: "login.example.com" }, client: { client_id: "test-client", name: "Test application" }, transaction: { protocol: "oidc-basic-profile" } },
  null,
  2,
);

/** POST /admin/t/:tenant/actions/:id/test: POST /actions/actions/{id}/test {payload: the event}; the result on the page. */
export async function testAction(c: ConsoleContext): Promise<Response> {
  const event = str((await c.req.parseBody()).event);
  let payload: unknown;
  try {
    payload = JSON.parse(event);
  } catch (error) {
    return actionScreen(c, { error: `The event is not valid JSON: ${(error as Error).message}`, status: 400, test: { event } });
  }
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return actionScreen(c, { error: "The event must be a JSON object.", status: 400, test: { event } });
  const run = await c.var.api.post<{ payload: TestResult }>(tenantOf(c), `/actions/actions/${encodeURIComponent(c.req.param("id") as string)}/test`, { payload });
  if (!run.ok) return actionScreen(c, { error: run.error, status: statusOf(run.status), test: { event } });
  return actionScreen(c, { test: { event, result: run.body.payload } });
}

/** POST /admin/t/:tenant/actions/:id: PATCH /actions/actions/{id} {code}. */
export async function saveAction(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const code = str(form.code);
  const updated = await c.var.api.patch<Action>(tenantOf(c), `/actions/actions/${encodeURIComponent(c.req.param("id") as string)}`, { code });
  if (!updated.ok) return actionScreen(c, { error: updated.error, status: statusOf(updated.status), code });
  return actionScreen(c, { action: updated.body, notice: "Draft saved." });
}

/** POST /admin/t/:tenant/actions/:id/deploy: POST /actions/actions/{id}/deploy. */
export async function deployAction(c: ConsoleContext): Promise<Response> {
  const deployed = await c.var.api.post(tenantOf(c), `/actions/actions/${encodeURIComponent(c.req.param("id") as string)}/deploy`);
  if (!deployed.ok) return actionScreen(c, { error: deployed.error, status: statusOf(deployed.status) });
  return actionScreen(c, { notice: "Deployed: the current draft runs from now on." });
}
