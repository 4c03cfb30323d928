/** Audit and outbox DTOs (SPEC §2.10-2.11): what the worker tells an object about a write's caller. */
import type { Json } from "./json";

/** Who performed a write (SPEC §2.10 `actor`). */
export interface AuditActor {
  type: "client" | "user" | "system" | "anonymous";
  id: string | null;
  email?: string | null;
  scopes?: string[];
  client_id?: string | null;
}

/** The HTTP request behind a write (SPEC §2.10 `request`); redacted before it is stored. */
export interface AuditRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: Json;
  ip?: string | null;
  user_agent?: string | null;
}

/** Caller context passed with every write RPC so that its audit events can be built in the commit. */
export interface AuditContext {
  actor: AuditActor;
  request?: AuditRequest;
}

/** One audit event as stored in the outbox payload and in a log row's details (SPEC §2.10). */
export interface AuditEvent {
  event_type: string;
  log_type: string;
  category: "user_action" | "admin_action" | "system" | "api";
  description: string;
  actor: AuditActor;
  target?: { type: string; id: string | null; before?: Json; after?: Json; diff?: Record<string, { before: Json; after: Json }> };
  request?: AuditRequest;
  response?: { status_code: number; body?: Json };
  client_id?: string | null;
  user_id?: string | null;
  timestamp: string;
  /** Events recorded outside a tenant object (the registry): the tenant whose logs receive the row. */
  log_tenant_id?: string;
  /** The action executions of this login or exchange (the reference platform's `details.actions`). */
  actions?: { executions: string[] };
}

/** A log row in the reference platform's shape (GET /api/v2/logs). */
export interface LogRecord {
  log_id: string;
  date: string;
  type: string;
  description: string | null;
  client_id: string | null;
  user_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, Json>;
}

/** A dead-lettered outbox event (GET /api/v2/failed-events). */
export interface FailedEvent {
  id: string;
  event_type: string;
  retry_count: number;
  error: string | null;
  final_error: string | null;
  created_at: string;
  dead_lettered_at: string;
  payload: Json;
}
