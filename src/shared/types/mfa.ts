/** Authentication methods, MFA transactions and one-time challenges (SPEC §2.4-2.5, §3.4-3.5). */
import type { Json } from "./json";

/** The method types of SPEC §2.4 (the guardian factor of each: SPEC §2.5). */
export type AuthenticationMethodType = "totp" | "phone" | "webauthn-roaming" | "webauthn-platform" | "passkey" | "recovery-code";

/** WebAuthn transports (WebAuthn Level 3 §5.8.4) the spec lets a credential declare. */
export type CredentialTransport = "internal" | "usb" | "ble" | "nfc" | "hybrid";

/**
 * A stored authentication method as it crosses RPC. The TOTP secret stays an AES-GCM ciphertext (the worker
 * opens it to verify a code and never shows it); WebAuthn methods carry only public credential data.
 */
export interface AuthenticationMethodRecord {
  id: string;
  user_id: string;
  type: AuthenticationMethodType;
  confirmed: boolean;
  name: string | null;
  totp_secret_enc: string | null;
  phone_number: string | null;
  /** Phone methods: `sms` or `voice` (only `sms` sends codes here). */
  preferred_authentication_method: string | null;
  /** base64url credential id (WebAuthn, passkey). */
  credential_id: string | null;
  /** base64url COSE public key. */
  public_key: string | null;
  sign_count: number | null;
  credential_backed_up: boolean | null;
  credential_device_type: "single_device" | "multi_device" | null;
  transports: CredentialTransport[] | null;
  aaguid: string | null;
  relying_party_identifier: string | null;
  user_handle: string | null;
  user_agent: string | null;
  created_at: string;
  enrolled_at: string | null;
  last_auth_at: string | null;
}

/** A method as the worker prepared it (id generated, TOTP secret already encrypted). */
export type NewAuthenticationMethod = Omit<AuthenticationMethodRecord, "created_at" | "enrolled_at" | "last_auth_at">;

/** Guardian factor names of SPEC §2.5 that a tenant switches on or off (plus recovery codes). */
export type GuardianFactor = "otp" | "sms" | "webauthn-roaming" | "webauthn-platform" | "recovery-code";

/** SMS providers a tenant may select: the deployment's own sender (`auth0`) or a Twilio account. */
export type SmsProviderName = "auth0" | "twilio";

/** A tenant's MFA settings (GET/PUT /api/v2/guardian/*), read by the login flow from the configuration snapshot. */
export interface GuardianSettings {
  factors: Record<GuardianFactor, boolean>;
  /** `["all-applications"]` enforces MFA at every login; `[]` leaves it off. */
  policies: string[];
  sms_provider: SmsProviderName;
}

/** The Twilio credentials of a tenant (`auth_token` sealed under `guardian_sms_provider:twilio`). */
export interface TwilioSettings {
  sid: string | null;
  from: string | null;
  messaging_service_sid: string | null;
  auth_token_enc: string | null;
}

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
}

/** A new MFA transaction as the worker prepared it (secret hashed, ids generated). */
export interface NewMfaTransaction {
  id: string;
  kind: "login" | "ticket";
  secret_hash: string;
  user_id: string;
  login_session_id: string | null;
  csrf_token: string;
  pending: MfaPending;
  expires_at: number;
}

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
}

/** A message the development sink kept. */
export interface DevMessage {
  id: string;
  channel: "sms" | "email";
  recipient: string;
  subject: string | null;
  body: string;
  created_at: string;
}
