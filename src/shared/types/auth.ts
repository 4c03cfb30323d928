import type { UserRecord, UserWithSecret } from "../schemas/users";
import type { ActionEffects } from "../schemas/actions";
import type { Json } from "./json";
import type { AuditContext } from "./audit";

/** Login transactions, sessions and single-use artifacts (user records live in schemas/users.ts). */

/** A validated /authorize request, as kept in its login session. */
export interface AuthorizeRequest {
  client_id: string;
  redirect_uri: string;
  response_type: string;
  response_mode: "query" | "fragment" | "form_post" | "web_message";
  scope: string;
  state?: string;
  nonce?: string;
  audience?: string;
  /** The organization's id once /authorize resolved it (the request may name it by id or name). */
  organization?: string;
  organization_name?: string;
  /** The ticket of an organization invitation being accepted (issue 11). */
  invitation?: string;
  prompt?: string;
  max_age?: number;
  code_challenge?: string;
  code_challenge_method?: "S256" | "plain";
  ui_locales?: string;
  screen_hint?: string;
  login_hint?: string;
  /** The connection the request names (`connection=`): a database connection picks the login form's. */
  connection?: string;
  /** Set when the transaction is a SAML login (/samlp/{client_id}): it completes with a SAML response. */
  samlp?: SamlTransaction;
  /**
   * The code is consumed inside the tenant object (the device flow's approval at /activate/callback, in the
   * commit that approves the device): it is stored there, never sealed (issue 31).
   */
  stored_code?: true;
}

/** What a SAML login must answer, fixed when it starts (the AuthnRequest's facts, already checked). */
export interface SamlTransaction {
  /** The assertion consumer service the response is POSTed to. */
  acs_url: string;
  /** The AuthnRequest ID (InResponseTo); absent for IdP-initiated logins. */
  request_id?: string;
  /** The SP's entity id (the AuthnRequest Issuer), the default audience. */
  sp_entity_id?: string;
  relay_state?: string;
}

export interface LoginSession {
  id: string;
  client_id: string;
  request: AuthorizeRequest;
  csrf_token: string;
  state: "pending" | "awaiting_mfa" | "completed";
  user_id: string | null;
  created_at: string;
  expires_at: string;
}

/**
 * The login form's POST in one read of the tenant (issue 31, `logins().passwordRead`): the login session and,
 * per database connection the worker named, the account with the submitted email (its hash included) and
 * whether account linking by verified email would link it now (null for an account that is already linked).
 */
export interface PasswordLoginRead {
  session: LoginSession | null;
  /** The normalized email the accounts were looked up by. */
  email: string;
  accounts: Record<string, (UserWithSecret & { links: boolean | null }) | null>;
}

/** A browser session as the worker prepares it (the secret's hash only; the secret goes to the cookie). */
export interface NewSession {
  id: string;
  secret_hash: string;
  user_id: string;
  client_id: string;
  /** Epoch milliseconds; absent means the time of the commit. */
  authenticated_at?: number;
  expires_at: number;
  /**
   * The issuer of the host the user logged in through (the `iss` of the session's ID tokens), so that a
   * back-channel logout token names the same issuer. Absent: the apex ISSUER.
   */
  issuer?: string;
}

/** Everything one interactive login commits together (`logins().complete`). */
/**
 * A login session that was sealed into its `state` and never stored (issue 31, src/worker/tenant/login-state.ts):
 * what the tenant object stores, in the same transaction, when a step first changes it.
 */
export interface FreshLoginSession {
  id: string;
  request: AuthorizeRequest;
  csrf_token: string;
  /** Milliseconds since the epoch. */
  expires_at: number;
}

export interface LoginCompletion {
  login_session_id: string;
  /** The session's content when it was sealed and may not be stored yet. */
  fresh?: FreshLoginSession;
  session: NewSession;
  /** The authorization code, when the response type asks for one. */
  code: NewAuthorizationCode | null;
  /** What the login's post-login actions asked to write (execution, warnings, metadata). */
  actions?: ActionEffects;
}

/** What an authorization code grants, fixed when it is issued. */
export interface CodeGrant {
  scope: string;
  audience?: string;
  nonce?: string;
  /** Seconds since the epoch. */
  auth_time: number;
  organization?: string;
  /** For the `org_name` claim when the tenant allows organization names (issue 11). */
  organization_name?: string;
  /** Claims the login's post-login actions set, after the claim rules (SPEC §6.2). */
  custom_claims?: { id_token?: Record<string, Json>; access_token?: Record<string, Json> };
  /** Authentication methods references (RFC 8176), e.g. ["pwd", "otp", "mfa"] after MFA. */
  amr?: string[];
  /** Scopes the post-login actions added to or removed from the access token (issue 32). */
  access_scope?: { add: string[]; remove: string[] };
}

export interface NewAuthorizationCode {
  code_hash: string;
  client_id: string;
  user_id: string;
  session_id: string | null;
  redirect_uri: string;
  grant: CodeGrant;
  code_challenge: string | null;
  code_challenge_method: "S256" | "plain" | null;
  expires_at: number;
}

export interface RedeemedCode {
  client_id: string;
  user_id: string;
  session_id: string | null;
  redirect_uri: string;
  grant: CodeGrant;
  /** The code's user as it is now (null if deleted since). */
  user: UserRecord | null;
  /** The permissions the user holds now on the grant's audience, directly or through roles (RBAC). */
  permissions: string[];
}

/** The conditions a code must meet to be consumed; any mismatch leaves it unconsumed. */
export interface CodeRedemption {
  code_hash: string;
  client_id: string;
  redirect_uri: string | null;
  /** S256(code_verifier) and the verifier itself, computed in the worker. */
  verifier_s256: string | null;
  verifier_plain: string | null;
  /** The jti the access token issued from this code will carry, kept so a replay can revoke it. */
  access_jti: string;
}

// Management writes of configuration (clients, resource servers, client grants, connections, branding)

// Declared with the resource's schema (issue 26 point 4); re-exported for callers.
export type { SessionRecord } from "../schemas/sessions";

/**
 * A sealed authorization code's facts (issue 31): what the tenant object stored per code before, carried by
 * the code itself (sealed in the worker, src/worker/oauth/tokens/sealed-code.ts). `id` names its single use.
 */
export type SealedCodeContent = Omit<NewAuthorizationCode, "code_hash"> & { id: string };

/** The `seacft` log event of one redemption, as its code shard keeps it until the tenant's logs have it. */
export interface CodeExchangeLog {
  /** The log row's id (`evt_…`, time-ordered): a batch delivered twice writes the row once. */
  id: string;
  /** When the code was redeemed (epoch milliseconds): the log row's date. */
  at: number;
  client_id: string;
  user_id: string;
  audit: AuditContext;
}

/** One redemption attempt of a sealed code, as its code shard serializes it. */
export interface SealedCodeRedemption {
  id: string;
  user_id: string;
  expires_at: number;
  /** False when the worker found the code expired or the request not matching it (client, redirect_uri, PKCE). */
  consumable: boolean;
  /** The jti of the access token this redemption issues, kept so a replay revokes it (and its refresh family). */
  access_jti: string;
  log: CodeExchangeLog;
}

export type SealedCodeOutcome =
  | { ok: true }
  | { ok: false; reason: "consumed"; user_id: string; access_jti: string; redeemed_at: number }
  /** Not redeemed before and not consumable now: the worker's own reason stands. */
  | { ok: false; reason: "unconsumed" };

/** What the exchange of a sealed code reads of the tenant (one read, no write): is the grant still good? */
export interface CodeSubject {
  /** The code's user as it is now (null if deleted since), its identities left empty. */
  user: UserRecord | null;
  /** Whether the browser session the code was issued under still exists (false: revoked, logged out, ended). */
  session_live: boolean;
  /** The permissions the user holds now on the grant's audience (RBAC). */
  permissions: string[];
}
