import { fail, ok, type Result } from "../../../shared/errors";
import type { ActionBindingRecord, ActionPatch, ActionRecord, ActionSecretName, ActionTriggerRef, ActionVersionRecord, BoundAction, NewAction, NewActionVersion } from "../../../shared/schemas/actions";
import { iso, json, type Sql } from "../../sql";

/**
 * Actions (issue 13): drafts, immutable versions and ordered trigger bindings. A version freezes the draft's
 * code (and the instrumented module the sandbox loads, prepared by the worker), runtime and sealed secrets;
 * a binding runs its action's deployed version. Secret values never leave as anything but ciphertext.
 */

type Row = Record<string, unknown>;
const time = (value: unknown) => iso(value as number) as string;

const secretNames = (row: Row): ActionSecretName[] => json(row.secret_names as string, []);

function toVersion(row: Row, action: Row): ActionVersionRecord {
  return {
    id: String(row.id),
    action_id: String(row.action_id),
    code: String(row.code),
    dependencies: json(row.dependencies as string, []),
    deployed: action.deployed_version_id === row.id,
    runtime: String(row.runtime),
    secrets: secretNames(row),
    status: "built",
    number: Number(row.number),
    errors: [],
    action: {
      id: String(action.id),
      name: String(action.name),
      supported_triggers: json(action.supported_triggers as string, []),
      all_changes_deployed: action.all_changes_deployed === 1,
      created_at: time(action.created_at),
      updated_at: time(action.updated_at),
    },
    built_at: time(row.created_at),
    created_at: time(row.created_at),
    updated_at: time(row.created_at),
    supported_triggers: json(row.supported_triggers as string, []),
  };
}

function toAction(sql: Sql, row: Row): ActionRecord {
  const deployed = row.deployed_version_id ? sql.first<Row>`SELECT * FROM action_versions WHERE id = ${row.deployed_version_id as string}` : null;
  return {
    id: String(row.id),
    name: String(row.name),
    supported_triggers: json(row.supported_triggers as string, []),
    all_changes_deployed: row.all_changes_deployed === 1,
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
    code: String(row.code),
    dependencies: json(row.dependencies as string, []),
    runtime: String(row.runtime),
    secrets: secretNames(row),
    ...(deployed ? { deployed_version: toVersion(deployed, row) } : {}),
    status: "built",
    built_at: time(row.updated_at),
  };
}

const actionRow = (sql: Sql, id: string) => sql.first<Row>`SELECT * FROM actions WHERE id = ${id}`;

export function getAction(sql: Sql, id: string): ActionRecord | null {
  const row = actionRow(sql, id);
  return row ? toAction(sql, row) : null;
}

export interface ActionFilter {
  trigger_id?: string;
  action_name?: string;
  deployed?: boolean;
}

/** Actions, newest first, filtered as GET /actions/actions filters them. */
export function listActions(sql: Sql, filter: ActionFilter): ActionRecord[] {
  return sql
    .all<Row>`SELECT * FROM actions ORDER BY created_at DESC, id DESC`
    .filter((row) => filter.action_name === undefined || row.name === filter.action_name)
    .filter((row) => filter.deployed === undefined || (row.deployed_version_id !== null) === filter.deployed)
    .filter((row) => filter.trigger_id === undefined || json<ActionTriggerRef[]>(row.supported_triggers as string, []).some((t) => t.id === filter.trigger_id))
    .map((row) => toAction(sql, row));
}

const stampSecrets = (names: string[], previous: ActionSecretName[], changed: boolean, now: number): ActionSecretName[] =>
  names.map((name) => {
    const kept = previous.find((s) => s.name === name);
    return kept && !changed ? kept : { name, updated_at: new Date(now).toISOString() };
  });

export function createAction(sql: Sql, input: NewAction, now: number): Result<ActionRecord> {
  if (sql.first`SELECT 1 FROM actions WHERE name = ${input.name}`) return fail("action_conflict", { name: input.name });
  const names = stampSecrets(input.secret_names, [], true, now);
  sql.run`INSERT INTO actions (id, name, supported_triggers, code, runtime, dependencies, secret_names, secrets_enc, created_at, updated_at)
    VALUES (${input.id}, ${input.name}, ${input.supported_triggers}, ${input.code}, ${input.runtime}, ${input.dependencies},
      ${names}, ${input.secrets_enc}, ${now}, ${now})`;
  return ok(getAction(sql, input.id) as ActionRecord);
}

/** Changes the draft; `all_changes_deployed` turns false until the next deploy. */
export function updateAction(sql: Sql, id: string, patch: ActionPatch, now: number): Result<{ before: ActionRecord; after: ActionRecord }> {
  const row = actionRow(sql, id);
  if (!row) return fail("inexistent_action");
  const before = toAction(sql, row);
  if (patch.name !== undefined && sql.first`SELECT 1 FROM actions WHERE name = ${patch.name} AND id <> ${id}`) {
    return fail("action_conflict", { name: patch.name });
  }
  if (patch.supported_triggers && sql.first`SELECT 1 FROM action_bindings WHERE action_id = ${id} AND trigger_id <> ${patch.supported_triggers[0]?.id ?? ""}`) {
    return fail("action_bound", { triggers: "a trigger this change drops" });
  }
  const names = patch.secret_names ? stampSecrets(patch.secret_names, secretNames(row), patch.secrets_enc !== row.secrets_enc, now) : secretNames(row);
  sql.run`UPDATE actions SET
      name = ${patch.name ?? before.name},
      supported_triggers = ${patch.supported_triggers ?? before.supported_triggers},
      code = ${patch.code ?? before.code},
      runtime = ${patch.runtime ?? before.runtime},
      dependencies = ${patch.dependencies ?? before.dependencies},
      secret_names = ${names},
      secrets_enc = ${patch.secret_names ? patch.secrets_enc ?? null : (row.secrets_enc as string | null)},
      all_changes_deployed = 0,
      updated_at = ${now}
    WHERE id = ${id}`;
  return ok({ before, after: getAction(sql, id) as ActionRecord });
}

/** Deletes an action; a bound one only with `force` (its bindings go with it). */
export function deleteAction(sql: Sql, id: string, force: boolean): Result<ActionRecord> {
  const before = getAction(sql, id);
  if (!before) return fail("inexistent_action");
  const bound = sql.all<{ trigger_id: string }>`SELECT DISTINCT trigger_id FROM action_bindings WHERE action_id = ${id}`;
  if (bound.length && !force) return fail("action_bound", { triggers: bound.map((b) => b.trigger_id).join(", ") });
  sql.run`DELETE FROM action_bindings WHERE action_id = ${id}`;
  sql.run`DELETE FROM action_versions WHERE action_id = ${id}`;
  sql.run`DELETE FROM actions WHERE id = ${id}`;
  return ok(before);
}

/** What the worker needs to build a version or run a test: the draft's code, secrets and stamp. */
export function draftOf(sql: Sql, id: string): { code: string; secrets_enc: string | null; updated_at: string; name: string } | null {
  const row = actionRow(sql, id);
  return row ? { code: String(row.code), secrets_enc: (row.secrets_enc as string | null) ?? null, updated_at: time(row.updated_at), name: String(row.name) } : null;
}

/** Freezes the draft as the next version and makes it the deployed one. */
export function deployDraft(sql: Sql, id: string, version: NewActionVersion, now: number): Result<ActionVersionRecord> {
  const row = actionRow(sql, id);
  if (!row) return fail("inexistent_action");
  if (time(row.updated_at) !== version.draft_updated_at) return fail("action_changed");
  const number = (sql.first<{ n: number | null }>`SELECT max(number) AS n FROM action_versions WHERE action_id = ${id}`?.n ?? 0) + 1;
  sql.run`INSERT INTO action_versions (id, action_id, number, code, compiled, runtime, dependencies, secret_names, secrets_enc, supported_triggers, created_at)
    VALUES (${version.id}, ${id}, ${number}, ${row.code as string}, ${version.compiled}, ${row.runtime as string}, ${row.dependencies as string},
      ${row.secret_names as string}, ${(row.secrets_enc as string | null) ?? null}, ${row.supported_triggers as string}, ${now})`;
  sql.run`UPDATE actions SET deployed_version_id = ${version.id}, all_changes_deployed = 1 WHERE id = ${id}`;
  return ok(getVersion(sql, id, version.id) as ActionVersionRecord);
}

/** Makes an earlier version the deployed one (roll back); with `updateDraft` the draft takes its content. */
export function deployVersion(sql: Sql, actionId: string, versionId: string, updateDraft: boolean, now: number): Result<ActionVersionRecord> {
  const version = sql.first<Row>`SELECT * FROM action_versions WHERE id = ${versionId} AND action_id = ${actionId}`;
  if (!version) return fail(actionRow(sql, actionId) ? "inexistent_action_version" : "inexistent_action");
  if (updateDraft) {
    sql.run`UPDATE actions SET code = ${version.code as string}, runtime = ${version.runtime as string}, dependencies = ${version.dependencies as string},
        secret_names = ${version.secret_names as string}, secrets_enc = ${(version.secrets_enc as string | null) ?? null}, updated_at = ${now}
      WHERE id = ${actionId}`;
  }
  sql.run`UPDATE actions SET deployed_version_id = ${versionId}, all_changes_deployed = ${updateDraft ? 1 : 0} WHERE id = ${actionId}`;
  return ok(getVersion(sql, actionId, versionId) as ActionVersionRecord);
}

export function getVersion(sql: Sql, actionId: string, versionId: string): ActionVersionRecord | null {
  const action = actionRow(sql, actionId);
  const row = action ? sql.first<Row>`SELECT * FROM action_versions WHERE id = ${versionId} AND action_id = ${actionId}` : null;
  return action && row ? toVersion(row, action) : null;
}

/** Versions of an action, newest first; null when the action does not exist. */
export function listVersions(sql: Sql, actionId: string): ActionVersionRecord[] | null {
  const action = actionRow(sql, actionId);
  if (!action) return null;
  return sql.all<Row>`SELECT * FROM action_versions WHERE action_id = ${actionId} ORDER BY number DESC`.map((row) => toVersion(row, action));
}

/** The instrumented module of a version (what the sandbox loads). */
export function compiledVersion(sql: Sql, versionId: string): string | null {
  return sql.first<{ compiled: string }>`SELECT compiled FROM action_versions WHERE id = ${versionId}`?.compiled ?? null;
}

export function listBindings(sql: Sql, triggerId: string): ActionBindingRecord[] {
  return sql.all<Row>`SELECT * FROM action_bindings WHERE trigger_id = ${triggerId} ORDER BY position, id`.map((row) => ({
    id: String(row.id),
    trigger_id: String(row.trigger_id),
    display_name: String(row.display_name),
    action: getAction(sql, String(row.action_id)) as ActionRecord,
    created_at: time(row.created_at),
    updated_at: time(row.updated_at),
  }));
}

export interface BindingInput {
  id: string;
  ref: { type: "action_id" | "action_name" | "binding_id"; value: string };
  display_name?: string;
}

/**
 * Replaces a trigger's bindings with an ordered list (the reference platform's PATCH semantics). Every
 * referenced action must exist, support the trigger and be deployed; a `binding_id` keeps that binding.
 */
export function replaceBindings(sql: Sql, triggerId: string, inputs: BindingInput[], now: number): Result<{ before: ActionBindingRecord[]; after: ActionBindingRecord[] }> {
  const before = listBindings(sql, triggerId);
  const rows: { id: string; action: Row; display_name: string; created_at: number }[] = [];
  for (const input of inputs) {
    const existing = input.ref.type === "binding_id" ? sql.first<Row>`SELECT * FROM action_bindings WHERE id = ${input.ref.value} AND trigger_id = ${triggerId}` : null;
    const action =
      input.ref.type === "action_id"
        ? actionRow(sql, input.ref.value)
        : input.ref.type === "action_name"
          ? sql.first<Row>`SELECT * FROM actions WHERE name = ${input.ref.value}`
          : existing
            ? actionRow(sql, String(existing.action_id))
            : null;
    if (!action) return fail("inexistent_binding_ref", { type: input.ref.type, value: input.ref.value });
    if (!json<ActionTriggerRef[]>(action.supported_triggers as string, []).some((t) => t.id === triggerId)) {
      return fail("action_trigger_mismatch", { name: String(action.name), trigger: triggerId });
    }
    if (!action.deployed_version_id) return fail("action_not_deployed", { name: String(action.name) });
    rows.push({
      id: existing ? String(existing.id) : input.id,
      action,
      display_name: input.display_name ?? (existing ? String(existing.display_name) : String(action.name)),
      created_at: existing ? Number(existing.created_at) : now,
    });
  }
  sql.run`DELETE FROM action_bindings WHERE trigger_id = ${triggerId}`;
  rows.forEach((row, position) => {
    sql.run`INSERT INTO action_bindings (id, trigger_id, action_id, display_name, position, created_at, updated_at)
      VALUES (${row.id}, ${triggerId}, ${String(row.action.id)}, ${row.display_name}, ${position}, ${row.created_at}, ${now})`;
  });
  return ok({ before, after: listBindings(sql, triggerId) });
}

/** Every trigger's bound actions in order, for the configuration snapshot (no code). */
export function boundActions(sql: Sql): Record<string, BoundAction[]> {
  const rows = sql.all<Row>`SELECT b.id AS binding_id, b.trigger_id, a.id AS action_id, a.name AS action_name, v.id AS version_id,
      v.number AS version_number, v.secrets_enc
    FROM action_bindings b JOIN actions a ON a.id = b.action_id JOIN action_versions v ON v.id = a.deployed_version_id
    ORDER BY b.trigger_id, b.position, b.id`;
  const out: Record<string, BoundAction[]> = {};
  for (const row of rows) {
    const list = out[String(row.trigger_id)] ?? [];
    out[String(row.trigger_id)] = list;
    list.push({
      binding_id: String(row.binding_id),
      action_id: String(row.action_id),
      action_name: String(row.action_name),
      version_id: String(row.version_id),
      version_number: Number(row.version_number),
      secrets_enc: (row.secrets_enc as string | null) ?? null,
    });
  }
  return out;
}
