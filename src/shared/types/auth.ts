/** Users, login transactions, sessions and single-use artifacts. */
import type { Json } from "./json";

/** A user as the API shows it (never the password hash). */
export interface UserRecord {
  user_id: string;
  connection: string;
  email: string | null;
  email_verified: boolean;
  name: string | null;
  nickname: string | null;
  picture: string | null;
  blocked: boolean;
  app_metadata: Record<string, Json>;
  user_metadata: Record<string, Json>;
  last_login: string | null;
  logins_count: number;
  created_at: string;
  updated_at: string;
}

/** A user with the bcrypt hash, for the worker's password check only. */
export interface UserWithSecret extends UserRecord {
  password_hash: string | null;
}

export interface NewUser {
  user_id: string;
  connection: string;
  email: string;
  email_verified: boolean;
  password_hash: string | null;
  name?: string | null;
  nickname?: string | null;
  user_metadata?: Record<string, Json>;
}

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
  organization?: string;
  prompt?: string;
  max_age?: number;
  code_challenge?: string;
  code_challenge_method?: "S256" | "plain";
  ui_locales?: string;
  screen_hint?: string;
  login_hint?: string;
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

export interface SessionRecord {
  id: string;
  secret_hash: string;
  user_id: string;
  client_ids: string[];
  authenticated_at: string;
  last_interaction_at: string;
  expires_at: string;
  created_at: string;
  updated_at: string;
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
}

/** Everything one interactive login commits together (`logins().complete`). */
export interface LoginCompletion {
  login_session_id: string;
  session: NewSession;
  /** The authorization code, when the response type asks for one. */
  code: NewAuthorizationCode | null;
}

/** What an authorization code grants, fixed when it is issued. */
export interface CodeGrant {
  scope: string;
  audience?: string;
  nonce?: string;
  /** Seconds since the epoch. */
  auth_time: number;
  organization?: string;
  /** Authentication methods references (RFC 8176), e.g. ["pwd", "otp", "mfa"] after MFA. */
  amr?: string[];
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
