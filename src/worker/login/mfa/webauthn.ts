import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { now } from "../../../shared/clock";
import { sha256 } from "../../../shared/crypto/compare";
import { fromBase64Url, fromUtf8, toBase64Url } from "../../../shared/crypto/encoding";
import { randomId } from "../../../shared/crypto/random";
import type { AuthenticationMethodRecord, CredentialTransport } from "../../../shared/schemas/authentication-methods";
import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";
import { hashSecret } from "../session";

/**
 * WebAuthn ceremonies with @simplewebauthn/server, run in the worker only (ARCHITECTURE.md §2: CPU work never
 * in an object). The object stores each challenge's hash and consumes it once; it also moves the signature
 * counter with a conditional update (clone detection).
 */

/** What a WebAuthn method is for: a security key, a platform authenticator, or a (discoverable) passkey. */
export type CredentialKind = "webauthn-roaming" | "webauthn-platform" | "passkey";

/** A ceremony must finish within this time. @default 5 minutes */
export const WEBAUTHN_TIMEOUT_MS = 5 * 60 * 1000;

/**
 * RP ID and origin from the tenant's host (issue 12 point 5): its subdomain or custom domain, so a passkey
 * created on one tenant is never offered on another; the apex for the control plane.
 */
export function relyingParty(c: AppContext): { rpID: string; origin: string } {
  const issuer = new URL(c.var.tenant.issuer);
  return { rpID: issuer.hostname, origin: issuer.origin };
}

/** A stable, opaque user handle (WebAuthn §14.6.1: no personal data): SHA-256 of tenant and user id. */
export async function userHandle(tenantId: string, userId: string): Promise<string> {
  return toBase64Url(await sha256(`webauthn-user:${tenantId}:${userId}`));
}

/** base64url to bytes backed by a plain ArrayBuffer (what the library's types ask for). */
const bytes = (text: string) => new Uint8Array(fromBase64Url(text));

type UserVerification = "required" | "preferred" | "discouraged";
const SELECTION: Record<CredentialKind, { authenticatorAttachment?: "platform" | "cross-platform"; residentKey: "required" | "preferred" | "discouraged"; userVerification: UserVerification }> = {
  "webauthn-roaming": { authenticatorAttachment: "cross-platform", residentKey: "discouraged", userVerification: "preferred" },
  "webauthn-platform": { authenticatorAttachment: "platform", residentKey: "preferred", userVerification: "preferred" },
  // A passkey must be discoverable and verify the user: it can then stand in for the password.
  passkey: { residentKey: "required", userVerification: "required" },
};

/**
 * The user verification a registration asks for: a security key's follows the tenant's
 * `/guardian/factors/webauthn-roaming/settings` `user_verification` (the reference platform's setting).
 */
async function userVerificationFor(c: AppContext, kind: CredentialKind): Promise<UserVerification> {
  if (kind !== "webauthn-roaming") return SELECTION[kind].userVerification;
  const settings = (await tenantObject(c.env, c.var.tenant.id).settingsDocuments().get("guardian_webauthn_roaming")) as { user_verification?: string };
  const uv = settings.user_verification;
  return uv === "required" || uv === "discouraged" ? uv : "preferred";
}

async function storeChallenge(c: AppContext, purpose: string, subject: string, challenge: string): Promise<void> {
  await tenantObject(c.env, c.var.tenant.id)
    .createChallenge({ id: randomId("wch_"), purpose, subject, client_id: null, secret_hash: await hashSecret(challenge), data: {}, expires_at: now() + WEBAUTHN_TIMEOUT_MS });
}

/** Registration options for a user; the challenge is stored for `subject` (an MFA transaction). */
export async function registrationOptions(
  c: AppContext,
  input: { kind: CredentialKind; subject: string; user: { user_id: string; email: string | null; name: string | null }; rpName: string; existing: AuthenticationMethodRecord[] },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpID } = relyingParty(c);
  const options = await generateRegistrationOptions({
    rpName: input.rpName,
    rpID,
    userName: input.user.email ?? input.user.user_id,
    userDisplayName: input.user.name ?? input.user.email ?? input.user.user_id,
    userID: bytes(await userHandle(c.var.tenant.id, input.user.user_id)),
    attestationType: "none",
    timeout: WEBAUTHN_TIMEOUT_MS,
    excludeCredentials: input.existing.filter((m) => m.credential_id).map((m) => ({ id: m.credential_id as string, transports: m.transports ?? [] })),
    authenticatorSelection: { ...SELECTION[input.kind], userVerification: await userVerificationFor(c, input.kind) },
    supportedAlgorithmIDs: [-7, -8, -257],
  });
  await storeChallenge(c, `webauthn-register:${input.kind}`, input.subject, options.challenge);
  return options;
}

/** Authentication options: the user's credentials (second factor) or none (a discoverable passkey login). */
export async function authenticationOptions(
  c: AppContext,
  input: { purpose: string; subject: string; credentials: AuthenticationMethodRecord[]; userVerification: "required" | "preferred" },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { rpID } = relyingParty(c);
  const options = await generateAuthenticationOptions({
    rpID,
    timeout: WEBAUTHN_TIMEOUT_MS,
    userVerification: input.userVerification,
    allowCredentials: input.credentials.filter((m) => m.credential_id).map((m) => ({ id: m.credential_id as string, transports: m.transports ?? [] })),
  });
  await storeChallenge(c, input.purpose, input.subject, options.challenge);
  return options;
}

/** Parses the browser's JSON response; null for anything that is not one. */
export function parseCredential<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(text: string | undefined): T | null {
  if (!text || text.length > 32_768) return null;
  try {
    const value = JSON.parse(text) as T;
    if (typeof value?.id !== "string" || typeof value.rawId !== "string" || value.type !== "public-key" || typeof value.response?.clientDataJSON !== "string") return null;
    return value;
  } catch {
    return null;
  }
}

/** The challenge the browser signed (clientDataJSON.challenge), or null. */
function signedChallenge(response: { response: { clientDataJSON: string } }): string | null {
  try {
    const challenge = (JSON.parse(fromUtf8(fromBase64Url(response.response.clientDataJSON))) as { challenge?: unknown }).challenge;
    return typeof challenge === "string" ? challenge : null;
  } catch {
    return null;
  }
}

/** Consumes the stored challenge the response claims, exactly once; null when it is not ours or was used. */
async function consumeChallenge(c: AppContext, purpose: string, subject: string, response: { response: { clientDataJSON: string } }): Promise<string | null> {
  const challenge = signedChallenge(response);
  if (!challenge) return null;
  const stored = await tenantObject(c.env, c.var.tenant.id).challenges().consumeByHash(purpose, subject, await hashSecret(challenge));
  return stored ? challenge : null;
}

/** The stored fields of a verified registration. */
export interface VerifiedCredential {
  credential_id: string;
  public_key: string;
  sign_count: number;
  transports: CredentialTransport[];
  credential_backed_up: boolean;
  credential_device_type: "single_device" | "multi_device";
  aaguid: string;
  relying_party_identifier: string;
}

const TRANSPORTS = new Set<string>(["internal", "usb", "ble", "nfc", "hybrid"]);

/** Verifies a registration against its consumed challenge, the tenant's origin and RP ID. */
export async function verifyRegistration(c: AppContext, kind: CredentialKind, subject: string, response: RegistrationResponseJSON): Promise<VerifiedCredential | null> {
  const challenge = await consumeChallenge(c, `webauthn-register:${kind}`, subject, response);
  if (!challenge) return null;
  const { rpID, origin } = relyingParty(c);
  try {
    const result = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: (await userVerificationFor(c, kind)) === "required" });
    if (!result.verified) return null;
    const info = result.registrationInfo;
    return {
      credential_id: info.credential.id,
      public_key: toBase64Url(info.credential.publicKey),
      sign_count: info.credential.counter,
      transports: (response.response.transports ?? []).filter((t) => TRANSPORTS.has(t)) as CredentialTransport[],
      credential_backed_up: info.credentialBackedUp,
      credential_device_type: info.credentialDeviceType === "multiDevice" ? "multi_device" : "single_device",
      aaguid: info.aaguid,
      relying_party_identifier: rpID,
    };
  } catch (error) {
    console.warn("webauthn registration refused:", (error as Error).message);
    return null;
  }
}

/**
 * Verifies an assertion by a stored credential against its consumed challenge. The new counter is then
 * recorded by the caller through the object's conditional update (a clone loses the race there).
 */
export async function verifyAssertion(
  c: AppContext,
  purpose: string,
  subject: string,
  response: AuthenticationResponseJSON,
  method: AuthenticationMethodRecord,
  requireUserVerification: boolean,
): Promise<{ newCounter: number; userVerified: boolean } | null> {
  if (!method.credential_id || !method.public_key || method.credential_id !== response.id) return null;
  const challenge = await consumeChallenge(c, purpose, subject, response);
  if (!challenge) return null;
  const { rpID, origin } = relyingParty(c);
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification,
      credential: { id: method.credential_id, publicKey: bytes(method.public_key), counter: method.sign_count ?? 0, transports: method.transports ?? [] },
    });
    return result.verified ? { newCounter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified } : null;
  } catch (error) {
    console.warn("webauthn assertion refused:", (error as Error).message);
    return null;
  }
}
