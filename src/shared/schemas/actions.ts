import { z } from "zod";
import { ACTION_RUNTIMES } from "../actions/triggers";
import type { EgressCall } from "../actions/egress";
import type { Json } from "../types/json";

/** The reference platform's limits: names up to 128 characters, code up to 100 KB. */
const name = z.string().trim().min(1).max(128);
const code = z.string().max(102_400, "code must be at most 100 KB");
/** Trigger ids are checked against what the system dispatches in the route (400 `invalid_trigger`). */
const trigger = z.looseObject({ id: z.string().min(1).max(64), version: z.string().max(16).optional() });
const runtime = z.enum(ACTION_RUNTIMES);
const dependency = z.looseObject({ name: z.string().min(1).max(214), version: z.string().max(256).optional(), registry_url: z.string().max(2048).optional() });
const secretName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "secret names are letters, digits and underscores, starting with a letter or underscore");
/** A secret's value is set on creation or replaced; omitted on update it keeps the stored value. */
const secret = z.strictObject({ name: secretName, value: z.string().max(4096).optional() });
const secrets = z
  .array(secret)
  .max(100)
  .refine((list) => new Set(list.map((s) => s.name)).size === list.length, "secret names must be unique");

/** POST /api/v2/actions/actions. `modules` is accepted only empty (action modules are not offered). */
export const createActionBody = z.strictObject({
  name,
  supported_triggers: z.array(trigger).min(1).max(1, "an action supports exactly one trigger"),
  code: code.optional(),
  dependencies: z.array(dependency).max(100).optional(),
  runtime: runtime.optional(),
  secrets: secrets.optional(),
  modules: z.array(z.unknown()).max(0, "action modules are not supported").optional(),
  deploy: z.boolean().optional(),
});

/** PATCH /api/v2/actions/actions/{id}: any draft field. */
export const updateActionBody = z
  .strictObject({
    name: name.optional(),
    supported_triggers: z.array(trigger).min(1).max(1, "an action supports exactly one trigger").optional(),
    code: code.optional(),
    dependencies: z.array(dependency).max(100).optional(),
    runtime: runtime.optional(),
    secrets: secrets.optional(),
    modules: z.array(z.unknown()).max(0, "action modules are not supported").optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "The body must change at least one field");

/** POST /api/v2/actions/actions/{id}/test: the event the action receives. */
export const testActionBody = z.strictObject({ payload: z.record(z.string(), z.json()) });

/** POST /api/v2/actions/actions/{id}/versions/{versionId}/deploy (roll back). */
export const deployVersionBody = z.strictObject({ update_draft: z.boolean().optional() }).optional();

const bindingRef = z.strictObject({
  type: z.enum(["action_id", "action_name", "binding_id"]),
  value: z.string().min(1).max(256),
});

/** The most actions one trigger may bind (the reference platform's limit). */
export const MAX_TRIGGER_BINDINGS = 20;

/** PATCH /api/v2/actions/triggers/{triggerId}/bindings: the whole ordered list (at most 20). */
export const updateBindingsBody = z.strictObject({
  bindings: z
    .array(z.strictObject({ ref: bindingRef, display_name: z.string().trim().min(1).max(128).optional(), secrets: z.array(secret).max(0, "binding secrets are not supported").optional() }))
    .max(MAX_TRIGGER_BINDINGS, `at most ${MAX_TRIGGER_BINDINGS} actions can be bound to a trigger`),
});

export type CreateActionBody = z.infer<typeof createActionBody>;
export type UpdateActionBody = z.infer<typeof updateActionBody>;
export type ActionSecretInput = z.infer<typeof secret>;

export interface ActionTriggerRef {
  id: string;
  version: string;
}

export interface ActionDependency {
  name: string;
  version: string;
  registry_url?: string;
}

/** A secret as the API shows it: the name and when its value changed, never the value. */
export interface ActionSecretName {
  name: string;
  updated_at: string;
}

export interface ActionVersionRecord {
  id: string;
  action_id: string;
  code: string;
  dependencies: ActionDependency[];
  deployed: boolean;
  runtime: string;
  secrets: ActionSecretName[];
  status: "built";
  number: number;
  errors: { id: string; msg: string }[];
  action: { id: string; name: string; supported_triggers: ActionTriggerRef[]; all_changes_deployed: boolean; created_at: string; updated_at: string };
  built_at: string;
  created_at: string;
  updated_at: string;
  supported_triggers: ActionTriggerRef[];
}

export interface ActionRecord {
  id: string;
  name: string;
  supported_triggers: ActionTriggerRef[];
  all_changes_deployed: boolean;
  created_at: string;
  updated_at: string;
  code: string;
  dependencies: ActionDependency[];
  runtime: string;
  secrets: ActionSecretName[];
  deployed_version?: ActionVersionRecord;
  status: "built";
  built_at: string;
}

export interface ActionBindingRecord {
  id: string;
  trigger_id: string;
  display_name: string;
  action: ActionRecord;
  created_at: string;
  updated_at: string;
}

/** What the worker prepared for a new action (secrets already encrypted). */
export interface NewAction {
  id: string;
  name: string;
  supported_triggers: ActionTriggerRef[];
  code: string;
  runtime: string;
  dependencies: ActionDependency[];
  secret_names: string[];
  secrets_enc: string | null;
}

/** A draft change; `secret_names`/`secrets_enc` replace the whole set when present. */
export type ActionPatch = Partial<Omit<NewAction, "id">>;

/** A version ready to store: the worker instrumented the draft's code. */
export interface NewActionVersion {
  id: string;
  compiled: string;
  /** The draft's updated_at the worker compiled: a draft changed since is a conflict. */
  draft_updated_at: string;
}

/** One bound action as the hot path needs it (configuration snapshot): no code, the secrets sealed. */
export interface BoundAction {
  binding_id: string;
  action_id: string;
  action_name: string;
  version_id: string;
  version_number: number;
  secrets_enc: string | null;
}

/** One action's part of an execution (the reference's ActionExecutionResult, plus what ran and its output). */
export interface ActionExecutionResult {
  action_name: string;
  action_id: string;
  version_id: string;
  version_number: number;
  error?: { id: string; msg: string };
  started_at: string;
  ended_at: string;
  duration_ms: number;
  /** Console output, cut to 256 characters plus a truncation marker. */
  logs: string;
  logs_truncated: boolean;
  /** Gatehouse: each outbound request of the run (host, status, duration, bytes), kept whole (issue 32). */
  egress?: EgressCall[];
}

export interface ActionExecutionRecord {
  id: string;
  trigger_id: string;
  status: "final" | "partial";
  results: ActionExecutionResult[];
  created_at: string;
  updated_at: string;
}

/** A warning a dispatch records in the tenant's logs (a dropped claim ...). */
export interface ActionWarning {
  description: string;
  details: Record<string, Json>;
  user_id?: string | null;
  client_id?: string | null;
}

/** What a dispatch asks the tenant object to write (one commit): its record, warnings and metadata changes. */
export interface ActionEffects {
  execution: ActionExecutionRecord | null;
  warnings: ActionWarning[];
  /** Keys to set on the user (null removes the key), from api.user.setAppMetadata / setUserMetadata. */
  app_metadata: Record<string, Json>;
  user_metadata: Record<string, Json>;
}
