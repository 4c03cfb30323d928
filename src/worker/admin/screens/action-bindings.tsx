import { ACTION_TRIGGERS } from "../../../shared/actions/triggers";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Notice, str, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";

/**
 * A trigger's bindings in execution order (issue 30: "bindings per trigger by drag or order buttons"): the list
 * (GET /actions/triggers/{trigger}/bindings) with Up, Down and Remove, and a select of the deployed actions of
 * that trigger to add at the end. Every change is one PATCH of the whole ordered list, as the API takes it.
 */

interface Binding {
  id: string;
  display_name?: string;
  action?: { id: string; name: string };
}
interface Action {
  id: string;
  name: string;
  supported_triggers?: { id: string }[];
  deployed_version?: unknown;
  all_changes_deployed?: boolean;
}

type Status = 200 | 400 | 403 | 404;
const statusOf = (s: number): Status => (s === 403 || s === 404 ? s : 400);
const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;
const triggerOf = (c: ConsoleContext) => c.req.param("trigger") as string;
const bindingsPath = (trigger: string) => `/actions/triggers/${encodeURIComponent(trigger)}/bindings`;

/** GET /admin/t/:tenant/triggers/:trigger. */
export async function bindingsScreen(c: ConsoleContext, outcome: { error?: string | null; notice?: string; status?: Status } = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const trigger = triggerOf(c);
  const shell = shellOf(c, `Trigger ${trigger}`, { tenant, section: "actions" });
  if (!ACTION_TRIGGERS.some((t) => t.id === trigger)) return sendConsolePage(c, shell, <ApiError message={`There is no trigger named ${trigger}.`} />, 404);
  const [read, actions] = await Promise.all([
    c.var.api.get<{ bindings: Binding[] }>(tenant, bindingsPath(trigger), { per_page: 50 }),
    c.var.api.get<{ actions: Action[] }>(tenant, "/actions/actions", { per_page: 100, triggerId: trigger, deployed: "true" }),
  ]);
  const bindings = read.ok ? read.body.bindings : [];
  const deployed = actions.ok ? actions.body.actions.filter((a) => (a.supported_triggers ?? []).some((t) => t.id === trigger)) : [];
  const editable = can(c, "update:actions");
  const csrf = c.var.operator.csrf;
  const action = tenantPath(tenant, `/triggers/${encodeURIComponent(trigger)}`);
  const button = (op: string, index: number, label: string, name: string, disabled = false) => (
    <form method="post" action={action} class="inline">
      <Csrf token={csrf} />
      <input type="hidden" name="op" value={op} />
      <input type="hidden" name="index" value={String(index)} />
      <button type="submit" class="secondary" aria-label={`${label}: ${name}`} disabled={disabled}>
        {label}
      </button>
    </form>
  );
  return sendConsolePage(
    c,
    shell,
    <>
      <p>
        <a href={tenantPath(tenant, "/actions")}>All actions</a>
      </p>
      <h1>Trigger {trigger}</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? read.error} />
      <table>
        <caption class="muted">Actions bound to {trigger}, in the order they run</caption>
        <thead>
          <tr>
            <th scope="col">Order</th>
            <th scope="col">Action</th>
            {editable ? <th scope="col">Change</th> : null}
          </tr>
        </thead>
        <tbody>
          {bindings.map((b, i) => {
            const name = b.display_name ?? b.action?.name ?? b.id;
            return (
              <tr>
                <td>{i + 1}</td>
                <td>{b.action ? <a href={tenantPath(tenant, `/actions/${encodeURIComponent(b.action.id)}`)}>{name}</a> : name}</td>
                {editable ? (
                  <td>
                    {button("up", i, "Move up", name, i === 0)}
                    {button("down", i, "Move down", name, i === bindings.length - 1)}
                    {button("remove", i, "Remove", name)}
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
      {bindings.length === 0 ? <p class="muted">Nothing runs at {trigger} yet.</p> : null}
      {editable ? (
        <form method="post" action={action} class="card">
          <Csrf token={csrf} />
          <input type="hidden" name="op" value="add" />
          <div class="field">
            <label for="f-add">Add a deployed action at the end</label>
            <select id="f-add" name="action_id">
              {deployed.map((a) => (
                <option value={a.id}>{a.name}</option>
              ))}
            </select>
          </div>
          <button type="submit" disabled={deployed.length === 0}>
            Add
          </button>
        </form>
      ) : null}
    </>,
    outcome.status ?? 200,
  );
}

/** POST /admin/t/:tenant/triggers/:trigger: up, down, remove (by position) or add (by action id); one PATCH of the whole list. */
export async function changeBindings(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const trigger = triggerOf(c);
  const form = await c.req.parseBody();
  const op = str(form.op);
  const read = await c.var.api.get<{ bindings: Binding[] }>(tenant, bindingsPath(trigger), { per_page: 50 });
  if (!read.ok) return bindingsScreen(c, { error: read.error, status: statusOf(read.status) });
  const refs: { ref: { type: string; value: string } }[] = read.body.bindings.map((b) => ({ ref: { type: "binding_id", value: b.id } }));
  const index = Number.parseInt(str(form.index), 10);
  const valid = Number.isInteger(index) && index >= 0 && index < refs.length;
  const swap = (a: number, b: number) => {
    const [x, y] = [refs[a], refs[b]];
    if (x && y) [refs[a], refs[b]] = [y, x];
  };
  if (op === "up" && valid && index > 0) swap(index, index - 1);
  else if (op === "down" && valid && index < refs.length - 1) swap(index, index + 1);
  else if (op === "remove" && valid) refs.splice(index, 1);
  else if (op === "add" && str(form.action_id)) refs.push({ ref: { type: "action_id", value: str(form.action_id) } });
  else return bindingsScreen(c, { error: "Nothing to change: the form named no binding or action.", status: 400 });
  const patched = await c.var.api.patch(tenant, bindingsPath(trigger), { bindings: refs });
  if (!patched.ok) return bindingsScreen(c, { error: patched.error, status: statusOf(patched.status) });
  return bindingsScreen(c, { notice: "Bindings saved." });
}
