import { expect } from "vitest";
import { mgmt, uniqueId } from "./api";

const asTenant = (tenantId: string) => ({ "tenant-id": tenantId });

export interface ActionBody {
  id: string;
  name: string;
  code: string;
  supported_triggers: { id: string; version: string }[];
  secrets: { name: string; updated_at: string }[];
  deployed_version?: { id: string; number: number };
  all_changes_deployed: boolean;
}

/** A management call on a tenant (the control plane's token, `tenant-id` header). */
export const onTenant = (tenantId: string, method: string, path: string, body?: unknown) =>
  mgmt(method, path, { headers: asTenant(tenantId), ...(body !== undefined ? { body } : {}) });

/** Creates an action through the API. */
export async function createAction(tenantId: string, trigger: string, code: string, extra: Record<string, unknown> = {}): Promise<ActionBody> {
  const res = await onTenant(tenantId, "POST", "/actions/actions", { name: uniqueId("action"), supported_triggers: [{ id: trigger, version: "v3" }], code, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as ActionBody;
}

/** Creates, deploys and binds an action (appended to the trigger's bindings unless `alone`). */
export async function bindAction(tenantId: string, trigger: string, code: string, extra: Record<string, unknown> = {}): Promise<ActionBody> {
  const action = await createAction(tenantId, trigger, code, extra);
  const deployed = await onTenant(tenantId, "POST", `/actions/actions/${action.id}/deploy`);
  expect(deployed.status, await deployed.clone().text()).toBe(202);
  const current = (await (await onTenant(tenantId, "GET", `/actions/triggers/${trigger}/bindings`)).json()) as { bindings: { id: string }[] };
  const bindings = [...current.bindings.map((b) => ({ ref: { type: "binding_id", value: b.id } })), { ref: { type: "action_id", value: action.id } }];
  const bound = await onTenant(tenantId, "PATCH", `/actions/triggers/${trigger}/bindings`, { bindings });
  expect(bound.status, await bound.clone().text()).toBe(200);
  return action;
}

/** Removes every binding of a trigger. */
export async function unbindAll(tenantId: string, trigger: string): Promise<void> {
  expect((await onTenant(tenantId, "PATCH", `/actions/triggers/${trigger}/bindings`, { bindings: [] })).status).toBe(200);
}
