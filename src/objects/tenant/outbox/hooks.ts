import { fail, ok, type Result } from "../../../shared/errors";
import type { HookRecord } from "../../../shared/schemas/hooks";
import { iso, type Sql } from "../../sql";
import { DISPATCHABLE_TRIGGERS } from "../core/events";
import { bumpConfigVersion } from "../core/settings";

export { BLOCKING_TRIGGERS, type BlockingTrigger, DISPATCHABLE_TRIGGERS, OUTBOX_TRIGGERS, type OutboxTrigger } from "../core/events";

type Row = Record<string, unknown>;

const toHook = (r: Row): HookRecord => ({
  id: String(r.id),
  name: String(r.name),
  trigger_id: String(r.trigger_id),
  url: String(r.url),
  ...(r.template_id ? { template_id: String(r.template_id) } : {}),
  enabled: r.enabled === 1,
  created_at: iso(r.created_at as number) as string,
  updated_at: iso(r.updated_at as number) as string,
});

const notFound = () => fail("inexistent_hook");

export function getHook(sql: Sql, id: string): HookRecord | null {
  const row = sql.first<Row>`SELECT * FROM hooks WHERE id = ${id}`;
  return row ? toHook(row) : null;
}

/** All hooks, newest first, optionally of one trigger and enabled state. */
export function listHooks(sql: Sql, filter: { trigger_id?: string; enabled?: boolean } = {}): HookRecord[] {
  const rows = sql.all<Row>`SELECT * FROM hooks ORDER BY created_at DESC, id DESC`.map(toHook);
  return rows.filter((h) => (filter.trigger_id === undefined || h.trigger_id === filter.trigger_id) && (filter.enabled === undefined || h.enabled === filter.enabled));
}

/** The enabled webhooks of a trigger (what the relay and the prepare phase call); template hooks are not POSTed. */
export function enabledHooks(sql: Sql, triggerId: string): HookRecord[] {
  return sql.all<Row>`SELECT * FROM hooks WHERE trigger_id = ${triggerId} AND enabled = 1 AND template_id IS NULL ORDER BY created_at, id`.map(toHook);
}

/** Whether a trigger has an enabled webhook (one indexed step; what the write path asks before storing a hook event). */
export function hasEnabledHook(sql: Sql, triggerId: string): boolean {
  return sql.first`SELECT 1 FROM hooks WHERE trigger_id = ${triggerId} AND enabled = 1 AND template_id IS NULL LIMIT 1` !== undefined;
}

/** Template hooks (SPEC §6.2): built-in code bound like a hook, and the triggers each may bind to. */
export const HOOK_TEMPLATES: Record<string, readonly string[]> = {
  "account-linking": ["post-user-login", "post-user-registration", "post-user-update"],
};

export interface NewHook {
  id: string;
  name: string;
  trigger_id: string;
  url: string;
  enabled: boolean;
  template_id?: string;
}

/** Whether a hook may bind to a trigger: a template to its own triggers, a webhook to a dispatchable one. */
const bindable = (trigger: string, template: string | undefined) =>
  template ? (HOOK_TEMPLATES[template] ?? []).includes(trigger) : DISPATCHABLE_TRIGGERS.includes(trigger);

export function createHook(sql: Sql, hook: NewHook, now: number): Result<HookRecord> {
  if (!bindable(hook.trigger_id, hook.template_id)) return fail("invalid_trigger", { trigger: hook.trigger_id });
  if (sql.first`SELECT 1 FROM hooks WHERE name = ${hook.name}`) return fail("hook_conflict", { name: hook.name });
  sql.run`INSERT INTO hooks (id, name, trigger_id, url, enabled, template_id, created_at, updated_at)
    VALUES (${hook.id}, ${hook.name}, ${hook.trigger_id}, ${hook.url}, ${hook.enabled}, ${hook.template_id ?? null}, ${now}, ${now})`;
  bumpConfigVersion(sql);
  return ok(getHook(sql, hook.id) as HookRecord);
}

export interface HookPatch {
  name?: string;
  url?: string;
  enabled?: boolean;
  trigger_id?: string;
}

export function updateHook(sql: Sql, id: string, patch: HookPatch, now: number): Result<{ before: HookRecord; after: HookRecord }> {
  const before = getHook(sql, id);
  if (!before) return notFound();
  if (patch.trigger_id !== undefined && !bindable(patch.trigger_id, before.template_id)) {
    return fail("invalid_trigger", { trigger: patch.trigger_id });
  }
  if (patch.name !== undefined && sql.first`SELECT 1 FROM hooks WHERE name = ${patch.name} AND id <> ${id}`) {
    return fail("hook_conflict", { name: patch.name });
  }
  const next = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
  sql.run`UPDATE hooks SET name = ${next.name}, url = ${next.url}, enabled = ${next.enabled}, trigger_id = ${next.trigger_id},
      updated_at = ${now} WHERE id = ${id}`;
  bumpConfigVersion(sql);
  return ok({ before, after: getHook(sql, id) as HookRecord });
}

export function deleteHook(sql: Sql, id: string): Result<HookRecord> {
  const before = getHook(sql, id);
  if (!before) return notFound();
  sql.run`DELETE FROM hooks WHERE id = ${id}`;
  bumpConfigVersion(sql);
  return ok(before);
}
