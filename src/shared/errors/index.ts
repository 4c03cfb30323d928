import { type ErrorEntry, ManagementError } from "./classes";
import { ACTION_ERRORS } from "./catalogue/actions";
import { JOB_ERRORS } from "./catalogue/jobs";
import { MFA_ERRORS } from "./catalogue/mfa";
import { OAUTH_ERRORS } from "./catalogue/oauth";
import { ORGANIZATION_ERRORS } from "./catalogue/organizations";
import { REQUEST_ERRORS } from "./catalogue/request";
import { ROLE_ERRORS } from "./catalogue/roles";
import { TENANT_ERRORS } from "./catalogue/tenants";
import { USER_ERRORS } from "./catalogue/users";

export * from "./classes";

/**
 * The one catalogue of domain and management failures (issue 7; better-auth's error-code catalogue). Keys
 * are stable codes that objects return (`fail("inexistent_client")`) and routes throw (`problem(...)`);
 * each has exactly one status, one message and the reference platform's `errorCode`, so the same failure
 * reads the same on every route. Add a code to its capability's part (errors/catalogue/), never a status or
 * message at a call site.
 */
export const ERRORS = {
  ...REQUEST_ERRORS,
  ...TENANT_ERRORS,
  ...OAUTH_ERRORS,
  ...ROLE_ERRORS,
  ...USER_ERRORS,
  ...ORGANIZATION_ERRORS,
  ...ACTION_ERRORS,
  ...MFA_ERRORS,
  ...JOB_ERRORS,
} as const satisfies Record<string, ErrorEntry>;

/** A stable failure code (a key of {@link ERRORS}). */
export type ErrorCode = keyof typeof ERRORS;

/** Values for a message's `{param}` placeholders. */
export type ErrorParams = Record<string, string | number>;

/**
 * A domain failure as it crosses Durable Object RPC: a plain value, never a thrown class instance. The
 * code is what callers branch on; status, message and errorCode are the catalogue's, filled in by `fail`.
 */
export interface DomainError extends ErrorEntry {
  code: ErrorCode;
  params?: ErrorParams;
}

/** The result shape every object method with a domain failure mode returns. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: DomainError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

/** A domain failure by code (objects). */
export const fail = (code: ErrorCode, params?: ErrorParams): Result<never> => ({
  ok: false,
  error: { code, ...(params === undefined ? {} : { params }), ...describeError({ code, params }) },
});

/** Status, message and wire `errorCode` of a failure, from the catalogue. */
export function describeError(error: { code: ErrorCode; params?: ErrorParams }): ErrorEntry {
  const entry: ErrorEntry = ERRORS[error.code];
  const message = entry.message.replace(/\{(\w+)\}/g, (_, key: string) => String(error.params?.[key] ?? ""));
  return { status: entry.status, message, errorCode: entry.errorCode };
}

/** The management error to throw for a catalogue code (routes, middleware). */
export function problem(code: ErrorCode, params?: ErrorParams): ManagementError {
  const { status, message, errorCode } = describeError({ code, params });
  return new ManagementError(status, message, errorCode);
}

/** Unwraps an object result in the worker, throwing its domain error as a management error. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw problem(result.error.code, result.error.params);
}
