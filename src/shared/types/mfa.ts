/** MFA transactions and one-time challenges (SPEC §3.4-3.5; method and factor records live in schemas/). */
import type { Json } from "./json";
import type { GuardianFactor } from "../schemas/guardian";
import type { AuthenticationMethodRecord } from "../schemas/authentication-methods";
import type { UserRecord } from "../schemas/users";

/** Why an enrollment ticket could not be redeemed. */
export type TicketFailure = "unknown" | "expired" | "redeemed";

/**
 * One browser's MFA step (issue 12): a login waiting for its second factor (`login`), or an enrollment
 * started from a ticket (`ticket`). Bound to the browser by a cookie secret whose hash is stored.
 */
export interface MfaTransaction {
  id: string;
  kind: "login" | "ticket";
  secret_hash: string;
  user_id: string;
  login_session_id: string | null;
  csrf_token: string;
  pending: MfaPending;
  created_at: string;
  expires_at: string;
  completed_at: string | null;
}

/** What an MFA transaction has in progress (stored as JSON). */
export interface MfaPending {
  /** The second factor was verified (or was not needed): the login may complete. */
  satisfied?: boolean;
  /** amr values earned so far (RFC 8176). */
  amr?: string[];
  /** An enrollment in progress. */
  enrollment?: {
    factor: GuardianFactor | "passkey";
    method_id: string;
    totp_secret_enc?: string;
    phone_number?: string;
  };
  /** Recovery codes were generated and must be shown once before the flow goes on. */
  recovery_shown?: boolean;
  /** How many SMS codes were sent in this transaction (resend limit). */
  sms_sent?: number;
  /** The factor an enrollment ticket was issued for (`otp`, `phone`), when it named one. */
  ticket_factor?: string;
  /** The passkey enrollment offer after a password login was answered. */
  passkey_offer_done?: boolean;
  /** A second factor a post-login action asked for (issue 32), and the pipeline waiting for it. */
  action?: MfaActionStep;
}

/**
 * The MFA step of a post-login action: `api.multifactor.enable` (`any`), `api.authentication.challengeWith(Any)`
 * (`challenge`: only `factors`), `enrollWith(Any)` (`enroll`: a user who has a factor answers one first, phase
 * `challenge`, then enrolls one of `factors`, phase `enroll`; issue 25 finding 1).
 */
export interface MfaActionStep {
  mode: "any" | "challenge" | "enroll";
  /** The reference's factor types (`otp`, `phone`, `webauthn-platform`, `webauthn-roaming`, `recovery-code`); null: any. */
  factors: string[] | null;
  phase?: "challenge" | "enroll";
  /** The suspended post-login pipeline (the worker's `SuspendedDispatch`), resumed once the step is done. */
  dispatch: { action_id: string; index: number; commands: Json[]; results: Json[] };
}

/** A new MFA transaction as the worker prepared it (secret hashed, ids generated). */
export type NewMfaTransaction = Omit<MfaTransaction, "created_at" | "expires_at" | "completed_at"> & { expires_at: number };

/** A one-time code or WebAuthn challenge as the worker prepared it (only the secret's hash). */
export interface NewChallenge {
  id: string;
  purpose: string;
  subject: string;
  client_id: string | null;
  secret_hash: string;
  data: Record<string, Json>;
  expires_at: number;
}

/** A live challenge as it is checked by the worker. */
export interface ChallengeRecord {
  id: string;
  purpose: string;
  subject: string;
  client_id: string | null;
  secret_hash: string;
  data: Record<string, Json>;
  attempts: number;
  created_at: string;
  expires_at: string;
  /** Set by lookups that also answer used challenges (`challenges().find`). */
  consumed?: boolean;
}

/** A message the development sink kept. */
export interface DevMessage {
  id: string;
  channel: "sms" | "email";
  recipient: string;
  subject: string | null;
  /** The plain-text message. */
  body: string;
  /** Emails: the sender address and, when the message has one, its HTML part. */
  sender?: string | null;
  html?: string | null;
  created_at: string;
}

/**
 * What one step of the MFA API (POST /mfa/challenge, an MFA grant) needs of the tenant, in one read (issue 31):
 * the `mfa_token`'s challenge row, and when it is found its user, the user's authentication methods and how
 * many recovery codes are unused; when a code may be texted, how many the token has had texted already and the
 * tenant's SMS templates (`guardian_sms_templates`, empty otherwise).
 */
export interface MfaTokenRead {
  challenge: ChallengeRecord | null;
  user: UserRecord | null;
  methods: AuthenticationMethodRecord[];
  unused_recovery_codes: number;
  sent: number;
  sms_templates: Record<string, Json>;
}
