/** Actions (issue 13): the reference platform's Action, ActionVersion, ActionBinding and execution shapes. */
import type { Json } from "./json";

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

/** A log stream as the API shows it (the reference platform's http type); credentials never appear. */
export interface LogStreamRecord {
  id: string;
  name: string;
  type: "http";
  status: "active" | "paused" | "suspended";
  isPriority: boolean;
  filters: { type: "category"; name: string }[];
  sink: {
    httpEndpoint: string;
    httpContentType: string;
    httpContentFormat: "JSONARRAY" | "JSONLINES" | "JSONOBJECT";
    /** Header names only: values are credentials (sealed with the authorization header). */
    httpCustomHeaders?: { header: string }[];
  };
}

/** What the worker prepared for a stream: public sink fields, and the credentials sealed. */
export interface LogStreamInput {
  name: string;
  status: LogStreamRecord["status"];
  isPriority: boolean;
  filters: LogStreamRecord["filters"];
  sink: LogStreamRecord["sink"];
  /** `{ httpAuthorization?, httpCustomHeaders? }` sealed under log_stream_sink:<id>; null: none. */
  sink_enc: string | null;
}
