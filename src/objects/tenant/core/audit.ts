import { redact } from "../../../shared/redact";
import type { AuditContext, AuditEvent, Json } from "../../../shared/types";

/**
 * The reference platform's log type codes used here (its "log event type codes" table): success and
 * failure of logins, sign-ups, code and client-credentials exchanges, cross-origin authentication,
 * logouts and management API operations.
 */
export const LOG_TYPES = {
  login: "s",
  loginFailedPassword: "fp",
  loginFailedUser: "fu",
  loginFailed: "f",
  signup: "ss",
  signupFailed: "fs",
  codeExchange: "seacft",
  codeExchangeFailed: "feacft",
  clientCredentials: "seccft",
  clientCredentialsFailed: "feccft",
  crossOrigin: "scoa",
  crossOriginFailed: "fcoa",
  logout: "slo",
  api: "sapi",
  apiFailed: "fapi",
  /** Verification email links followed (POST /jobs/verification-email). */
  verificationEmail: "sv",
  verificationEmailFailed: "fv",
  /** A breached password at sign-up, at a password change and at login (issue 28: breached-password detection). */
  signupBreachedPassword: "signup_pwd_leak",
  resetBreachedPassword: "reset_pwd_leak",
  loginBreachedPassword: "pwd_leak",
  /** Warnings during login (a tenant action's claim dropped ...). */
  warning: "w",
} as const;

/** Entity state before and after a write; the diff is computed when both are present. */
export interface TargetState {
  type: string;
  id: string | null;
  before?: unknown;
  after?: unknown;
}

/** What a write knows about one of its audit events. */
export interface AuditInput {
  event_type: string;
  log_type: string;
  category: AuditEvent["category"];
  description: string;
  target?: TargetState;
  response?: { status_code: number; body?: unknown };
  client_id?: string | null;
  user_id?: string | null;
  /** Ids of the action executions this event's flow ran. */
  executions?: string[];
}

/** Top-level fields whose values differ (JSON comparison), each with its before and after value. */
export function diff(before: unknown, after: unknown): Record<string, { before: Json; after: Json }> {
  const a = (before ?? {}) as Record<string, unknown>;
  const b = (after ?? {}) as Record<string, unknown>;
  const out: Record<string, { before: Json; after: Json }> = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) out[key] = { before: (a[key] ?? null) as Json, after: (b[key] ?? null) as Json };
  }
  return out;
}

/**
 * One audit event (SPEC §2.10). Everything caller-supplied or entity-derived passes through `redact`, so a
 * password, secret, token, authorization header or API key nested at any depth never reaches the outbox
 * payload, a log row or a webhook. With `captureEntityState` false the target keeps only type and id.
 */
export function buildAuditEvent(input: AuditInput, ctx: AuditContext, now: number, captureEntityState = true): AuditEvent {
  const event: AuditEvent = {
    event_type: input.event_type,
    log_type: input.log_type,
    category: input.category,
    description: input.description,
    actor: redact(ctx.actor) as unknown as AuditEvent["actor"],
    timestamp: new Date(now).toISOString(),
    client_id: input.client_id ?? ctx.actor.client_id ?? null,
    user_id: input.user_id ?? null,
  };
  if (input.target) {
    const { type, id, before, after } = input.target;
    event.target = { type, id };
    if (captureEntityState) {
      if (before !== undefined) event.target.before = redact(before);
      if (after !== undefined) event.target.after = redact(after);
      if (before !== undefined && after !== undefined) event.target.diff = diff(event.target.before, event.target.after);
    }
  }
  if (input.executions?.length) event.actions = { executions: [...input.executions] };
  if (ctx.request) event.request = redact(ctx.request) as unknown as AuditEvent["request"];
  if (input.response) event.response = redact(input.response) as unknown as AuditEvent["response"];
  return event;
}

/** The system acting on its own (relay, seed, cron). */
export const SYSTEM_CONTEXT: AuditContext = { actor: { type: "system", id: null } };
