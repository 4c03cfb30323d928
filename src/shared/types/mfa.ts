/** Authentication methods, MFA transactions and one-time challenges (SPEC §2.4-2.5, §3.4-3.5). */

/** The method types of SPEC §2.4 (the guardian factor of each: SPEC §2.5). */
export type AuthenticationMethodType = "totp" | "phone" | "webauthn-roaming" | "webauthn-platform" | "passkey";

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
