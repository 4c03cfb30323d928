import { metadataChanges } from "../../shared/actions/dispatch";
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

export type PostLoginOutcome =
  | { ok: true; custom_claims?: { id_token: Record<string, Json>; access_token: Record<string, Json> }; effects: LoginEffects | null }
  | { ok: false; description: string; effects: LoginEffects | null };

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
  const outcome = await dispatch(c, input.config, "post-login", postLoginEvent(c, input));
  const who = { user_id: input.user.user_id, client_id: input.client.client_id };
  const base = { execution: outcome.execution, warnings: [] as ActionWarning[], app_metadata: {}, user_metadata: {} };
  if (outcome.stop?.kind === "failed") return { ok: false, description: outcome.stop.message, effects: base };
  // A deny does not cancel metadata changes the actions requested (the reference platform's rule).
  const effects: LoginEffects = { ...base, ...metadataChanges(outcome.commands) };
  if (outcome.stop?.kind === "denied") {
    return { ok: false, description: outcome.stop.command.reason ?? `Access denied by the action ${outcome.stop.action_name}`, effects };
  }
  const claims = tokenClaims(c, outcome, { systemAudience: input.audience === MANAGEMENT_AUDIENCE, ...who });
  effects.warnings = claims.warnings;
  return { ok: true, custom_claims: { id_token: claims.id_token, access_token: claims.access_token }, effects };
}

/** Whether a dispatch left anything to write. */
export const hasEffects = (effects: LoginEffects | null): effects is LoginEffects =>
  effects !== null &&
  (effects.execution !== null || effects.warnings.length > 0 || Object.keys(effects.app_metadata).length > 0 || Object.keys(effects.user_metadata).length > 0);
