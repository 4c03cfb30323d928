import { type ActionCacheWrite, cacheAfter } from "../../shared/actions/cache";
import { metadataChanges } from "../../shared/actions/dispatch";
import type { ActionCommand } from "../../shared/actions/sandbox";
import { randomToken } from "../../shared/crypto/random";
import type { ActionExecutionResult } from "../../shared/schemas/actions";
import { tenantObject } from "../tenant/stubs";
import { now } from "../../shared/clock";
import { MANAGEMENT_AUDIENCE } from "../../shared/scopes";
import type { Json, TenantConfig } from "../../shared/types";
import type { ActionEffects, ActionWarning } from "../../shared/schemas/actions";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { clientIp } from "../http/audit";
import { boundTo, dispatch, tokenClaims } from "./runtime";

/** What a post-login dispatch asks the login to apply (SPEC §6.1: inline, token-mutating). */
export type LoginEffects = ActionEffects;

/** A pipeline suspended by `api.redirect.sendUserTo` (issue 32 point 3), as stored until `/continue`. */
export interface SuspendedDispatch {
  /** The redirecting action, and its place in the trigger's bindings when it redirected. */
  action_id: string;
  index: number;
  /** What the runs up to the suspension produced (claims, metadata, scopes, execution results). */
  commands: ActionCommand[];
  results: ActionExecutionResult[];
}

/** Where the browser goes, and what /continue needs to resume. */
export interface PendingRedirect {
  location: string;
  /** The `state` the external site must send back (only its hash is stored). */
  state: string;
  dispatch: SuspendedDispatch;
}

/** The continuation of a suspended pipeline: what was stored, the state it was sent with, the request body. */
export interface ResumedDispatch {
  dispatch: SuspendedDispatch;
  state: string;
  body: Record<string, Json>;
}

/**
 * A second factor the actions asked for (issue 32 point 3): `api.multifactor.enable` at the end of the
 * pipeline (`mode: "any"`), or `api.authentication.challengeWith(Any)` / `enrollWith(Any)` in the middle of it,
 * after which the remaining actions wait. The MFA state machine (src/worker/login/mfa) runs the step; once the
 * factor was passed, the pipeline resumes after `dispatch.index` with what ran before.
 */
export interface ActionMfa {
  mode: "any" | "challenge" | "enroll";
  /** The reference's factor types (`otp`, `phone`, `webauthn-platform`, ...); null: any the tenant enables. */
  factors: string[] | null;
  /** `allowRememberBrowser`: an SSO login whose browser session already passed MFA needs no new step. */
  allow_remember_browser?: boolean;
  dispatch: SuspendedDispatch;
}

/** Scopes the actions added to or removed from the access token (`api.accessToken.addScope/removeScope`). */
export interface AccessScopeChanges {
  add: string[];
  remove: string[];
}

export type PostLoginOutcome =
  | {
      ok: true;
      custom_claims?: { id_token: Record<string, Json>; access_token: Record<string, Json> };
      access_scope?: AccessScopeChanges;
      /** The pipeline was suspended: nothing is issued, the browser goes to the action's page. */
      redirect?: PendingRedirect;
      /** The pipeline waits for a second factor: nothing is issued, the browser goes to /u2/mfa. */
      mfa?: ActionMfa;
      effects: LoginEffects | null;
    }
  | {
      ok: false;
      description: string;
      effects: LoginEffects | null;
      revoke_session?: boolean;
      /** `api.refreshToken.revoke`: the exchange is refused and the presented token's family revoked. */
      revoke_refresh_token?: boolean;
      /** The OAuth error, when not `access_denied` (a factor asked for in a prompt=none login: `login_required`). */
      error?: "login_required";
    };

export interface PostLoginInput {
  config: TenantConfig;
  client: ClientRecord;
  user: UserRecord;
  /** The reference platform's `transaction.protocol`: `oidc-basic-profile`, `oauth2-refresh-token` ... */
  protocol: string;
  scope: string;
  audience?: string | undefined;
  redirect_uri?: string;
  response_type?: string;
  state?: string;
  organization?: string | undefined;
  sessionId?: string | null;
  /** The login's authentication methods references (RFC 8176), when MFA or a passkey says more than `pwd`. */
  amr?: string[] | undefined;
  /** Whether the login can show a page (not a refresh, not prompt=none): `api.redirect.canRedirect()`. */
  interactive?: boolean;
  /** Resuming after a redirect (`/continue`). */
  resume?: ResumedDispatch | undefined;
  /** Resuming after the second factor the actions asked for (the asking action ran already). */
  afterMfa?: SuspendedDispatch | undefined;
  /** The refresh-token exchange's token, as `event.refresh_token` (the reference's fields). */
  refreshToken?: Record<string, Json>;
  /** A login answered from a browser session (SSO): `allowRememberBrowser` lets that session's MFA count. */
  sso?: boolean;
}

/**
 * The reference platform's `event.authentication.methods` names from a login's amr: the first factor (`pwd`,
 * or `passkey` for a passkey login), then `mfa` once a second factor was passed. Without an amr: `pwd`.
 */
export function authenticationMethodNames(amr: string[] | undefined): string[] {
  const passkey = Boolean(amr?.includes("hwk") && !amr.includes("pwd"));
  if (passkey) return ["passkey"];
  return amr?.includes("mfa") ? ["pwd", "mfa"] : ["pwd"];
}

/** The reference platform's post-login `event` (the parts this service knows). */
function postLoginEvent(c: AppContext, input: PostLoginInput): Record<string, Json> {
  const { user, client } = input;
  const connection = input.config.connections.find((x) => x.name === user.connection);
  const url = new URL(c.req.url);
  return {
    user: {
      ...(user as unknown as Record<string, Json>),
      identities: [{ provider: "auth0", connection: user.connection, user_id: user.user_id.slice(user.user_id.indexOf("|") + 1), isSocial: false }],
    },
    client: { client_id: client.client_id, name: client.name, metadata: client.client_metadata },
    connection: { id: connection?.id ?? null, name: user.connection, strategy: connection?.strategy ?? "auth0", metadata: {} },
    request: {
      ip: clientIp(c),
      user_agent: c.req.header("user-agent") ?? null,
      hostname: url.hostname,
      method: c.req.method,
      language: c.req.header("accept-language")?.split(",")[0] ?? null,
      query: Object.fromEntries(url.searchParams),
      ...(input.resume ? { body: input.resume.body } : {}),
      geoip: {},
    },
    transaction: {
      protocol: input.protocol,
      requested_scopes: input.scope.split(" ").filter(Boolean),
      redirect_uri: input.redirect_uri ?? null,
      response_type: (input.response_type ?? "").split(" ").filter(Boolean),
      state: input.state ?? null,
    },
    tenant: { id: c.var.tenant.id },
    stats: { logins_count: user.logins_count },
    authentication: { methods: authenticationMethodNames(input.amr).map((name) => ({ name, timestamp: new Date(now()).toISOString() })) },
    authorization: { roles: [] },
    ...(input.audience ? { resource_server: { identifier: input.audience } } : {}),
    ...(input.organization ? { organization: { id: input.organization } } : {}),
    ...(input.sessionId ? { session: { id: input.sessionId } } : {}),
    ...(input.refreshToken ? { refresh_token: input.refreshToken } : {}),
  };
}

/**
 * Runs the post-login actions of a login, a silent authentication or a refresh (SPEC §6.1: inline, bounded
 * by the sandbox timeout). A deny or a failure stops the login (the caller answers `access_denied` with the
 * message); otherwise the custom claims, after the claim rules, go into the tokens of this login. No bound
 * action: nothing runs and nothing is recorded.
 */
export async function runPostLogin(c: AppContext, input: PostLoginInput): Promise<PostLoginOutcome> {
  if (!boundTo(input.config, "post-login").length) return { ok: true, effects: null };
  const stub = tenantObject(c.env, c.var.tenant.id);
  const cache = await stub.actions().cacheEntries("post-login");
  // Each dispatch gets a fresh state for a redirect it may ask for; a resumed one also knows the state it
  // was sent away with (validateToken checks the token against that one).
  const next = randomToken(24);
  const context = {
    redirect: {
      state: input.resume?.state ?? next,
      next,
      can: input.interactive === true,
      domain: new URL(c.var.tenant.issuer).host,
      user_id: input.user.user_id,
    },
    cache: cache as unknown as Json,
  };
  const resume = input.resume ? resumeAt(input) : input.afterMfa ? resumeAfterMfa(input.config, input.afterMfa) : undefined;
  if ((input.resume || input.afterMfa) && !resume) return { ok: false, description: "The action that suspended this login is no longer bound to the login flow", effects: null };
  const event = postLoginEvent(c, input);
  let outcome = await dispatch(c, input.config, "post-login", event, { context, ...(resume ? { resume } : {}) });
  // A challenge for a factor this login already passed is met at once: the next actions run now.
  while (outcome.stop?.kind === "authentication" && outcome.stop.op === "challenge" && passedOneOf(input.amr, outcome.stop.factors)) {
    const prior = { commands: outcome.commands, results: outcome.execution.results };
    outcome = await dispatch(c, input.config, "post-login", event, { context, resume: { index: outcome.stop.index + 1, prior, fresh: true } });
  }
  await storeCacheWrites(c, cache, outcome.commands);
  const who = { user_id: input.user.user_id, client_id: input.client.client_id };
  const base = { execution: outcome.execution, warnings: [] as ActionWarning[], app_metadata: {}, user_metadata: {} };
  if (outcome.stop?.kind === "failed") return { ok: false, description: outcome.stop.message, effects: base };
  // A deny does not cancel metadata changes the actions requested (the reference platform's rule).
  const effects: LoginEffects = { ...base, ...metadataChanges(outcome.commands) };
  if (outcome.stop?.kind === "denied") {
    return { ok: false, description: outcome.stop.command.reason ?? `Access denied by the action ${outcome.stop.action_name}`, effects };
  }
  const revoke = outcome.commands.find((x): x is Extract<ActionCommand, { type: "revoke_session" }> => x.type === "revoke_session");
  if (revoke) return { ok: false, description: revoke.reason ?? "The session was revoked by an action", effects, revoke_session: true };
  const revokeRefresh = outcome.commands.find((x): x is Extract<ActionCommand, { type: "revoke_refresh_token" }> => x.type === "revoke_refresh_token");
  if (revokeRefresh) return { ok: false, description: revokeRefresh.reason ?? "The refresh token was revoked by an action", effects, revoke_refresh_token: true };
  if (outcome.stop?.kind === "redirect") {
    const { action_id, index } = outcome.stop;
    // The sandbox already refused anything else; the host holds to it too, and sends the parsed URL.
    const url = absoluteHttpUrl(outcome.stop.url);
    if (!url) return { ok: false, description: "api.redirect.sendUserTo needs an absolute http or https URL", effects };
    // Nothing is applied yet: the effects of the runs so far wait with the suspended pipeline.
    return { ok: true, redirect: { location: url, state: next, dispatch: { action_id, index, commands: outcome.commands, results: outcome.execution.results } }, effects: null };
  }
  const mfa = await mfaAsked(c, input, outcome);
  if (mfa) {
    if (input.interactive !== true) return { ok: false, effects, ...cannotPrompt(input) };
    return { ok: true, mfa, effects: null };
  }
  const claims = tokenClaims(c, outcome, { systemAudience: input.audience === MANAGEMENT_AUDIENCE, ...who });
  effects.warnings = claims.warnings;
  const access_scope = scopeChanges(outcome.commands);
  return { ok: true, custom_claims: { id_token: claims.id_token, access_token: claims.access_token }, ...(access_scope ? { access_scope } : {}), effects };
}

/** Where a resumed pipeline starts: the redirecting action's place in the bindings of now (it may have moved). */
function resumeAt(input: PostLoginInput): { index: number; prior: { commands: ActionCommand[]; results: ActionExecutionResult[] } } | undefined {
  const stored = input.resume?.dispatch;
  if (!stored) return undefined;
  const index = boundTo(input.config, "post-login").findIndex((b) => b.action_id === stored.action_id);
  return index < 0 ? undefined : { index, prior: { commands: stored.commands, results: stored.results } };
}

/** Where a pipeline resumes after the second factor it asked for: after the asking action, in the bindings of now. */
function resumeAfterMfa(config: TenantConfig, stored: SuspendedDispatch): { index: number; prior: { commands: ActionCommand[]; results: ActionExecutionResult[] }; fresh: true } | undefined {
  const index = boundTo(config, "post-login").findIndex((b) => b.action_id === stored.action_id);
  return index < 0 ? undefined : { index: index + 1, prior: { commands: stored.commands, results: stored.results }, fresh: true };
}

/** The amr value (RFC 8176, as the MFA screens record it) each of the reference's factor types earns. */
const FACTOR_AMR: Record<string, string> = { otp: "otp", phone: "sms", "webauthn-platform": "hwk", "webauthn-roaming": "hwk", "recovery-code": "recovery-code" };

/** Whether this login already passed one of the factors (the reference: "a matching factor in this transaction"). */
const passedOneOf = (amr: string[] | undefined, factors: readonly string[]) => Boolean(amr?.includes("mfa") && factors.some((f) => amr.includes(FACTOR_AMR[f] ?? f)));

/**
 * The second factor a finished or stopped pipeline asks for, or null: `api.authentication.*` stopped it, or
 * `api.multifactor.enable` was called (the last call wins) and the login has not passed MFA. With
 * `allowRememberBrowser`, an SSO login whose browser session passed MFA before needs none.
 */
async function mfaAsked(c: AppContext, input: PostLoginInput, outcome: Awaited<ReturnType<typeof dispatch>>): Promise<ActionMfa | null> {
  const results = outcome.execution.results;
  if (outcome.stop?.kind === "authentication") {
    const { action_id, index, op, factors } = outcome.stop;
    return { mode: op, factors, dispatch: { action_id, index, commands: outcome.commands, results } };
  }
  const enable = outcome.commands.findLast((x): x is Extract<ActionCommand, { type: "mfa" }> => x.type === "mfa");
  if (!enable || input.amr?.includes("mfa")) return null;
  if (enable.allow_remember_browser && input.sso && input.sessionId) {
    const earned = await tenantObject(c.env, c.var.tenant.id).mfa().sessionAmr(input.sessionId);
    if (earned.includes("mfa")) return null;
  }
  const bound = boundTo(input.config, "post-login");
  const last = bound[bound.length - 1];
  if (!last) return null;
  return {
    mode: "any",
    factors: enable.provider === "google-authenticator" ? ["otp"] : null,
    allow_remember_browser: enable.allow_remember_browser,
    dispatch: { action_id: last.action_id, index: bound.length - 1, commands: outcome.commands, results },
  };
}

/** A factor asked for where no page can be shown: a refresh token exchange, or a prompt=none login. */
function cannotPrompt(input: PostLoginInput): { description: string; error?: "login_required" } {
  if (input.protocol === "oauth2-refresh-token") {
    return { description: "Multifactor authentication was requested by an action, but a refresh token exchange cannot prompt for it (skip it when event.transaction.protocol is oauth2-refresh-token)" };
  }
  return { description: "Multi-factor authentication required", error: "login_required" };
}

/** `api.accessToken.addScope/removeScope`, in order (the last call on a scope wins); none: undefined. */
function scopeChanges(commands: readonly ActionCommand[]): AccessScopeChanges | undefined {
  const last = new Map<string, "add" | "remove">();
  for (const x of commands) if (x.type === "scope") last.set(x.scope, x.op);
  if (!last.size) return undefined;
  const pick = (op: "add" | "remove") => [...last].filter(([, o]) => o === op).map(([scope]) => scope);
  return { add: pick("add"), remove: pick("remove") };
}

/** Stores the run's `api.cache` writes when they keep the trigger within the cache limits (checked again here). */
async function storeCacheWrites(c: AppContext, before: Parameters<typeof cacheAfter>[0], commands: readonly ActionCommand[]): Promise<void> {
  const writes: ActionCacheWrite[] = [];
  for (const x of commands) {
    if (x.type !== "cache") continue;
    if (x.op === "delete") writes.push({ op: "delete", key: x.key });
    else if (x.value !== undefined && x.expires_at !== undefined) writes.push({ op: "set", key: x.key, value: x.value, expires_at: x.expires_at });
  }
  if (!writes.length || !cacheAfter(before, writes, now())) return;
  await tenantObject(c.env, c.var.tenant.id).actions().applyCacheWrites("post-login", writes);
}

/** Whether a dispatch left anything to write. */
export const hasEffects = (effects: LoginEffects | null): effects is LoginEffects =>
  effects !== null &&
  (effects.execution !== null || effects.warnings.length > 0 || Object.keys(effects.app_metadata).length > 0 || Object.keys(effects.user_metadata).length > 0);

/** The href of an absolute http(s) URL, else null. */
function absoluteHttpUrl(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}
