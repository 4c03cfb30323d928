import { randomToken } from "../../../shared/crypto/random";
import { now } from "../../../shared/clock";
import type { AuthorizeRequest, CodeGrant, NewAuthorizationCode, SealedCodeContent } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { hashSecret } from "../../login/session";
import { type SealPurpose, seal, unseal } from "../../tenant/sealed";

/**
 * Sealed authorization codes (issue 31: the code exchange leaves the tenant object's write path). A code
 * issued by a login or an SSO answer carries its own facts (client, redirect_uri, PKCE challenge, grant,
 * user, session, expiry), sealed like a login state (src/worker/tenant/sealed.ts: AES-256-GCM under a key
 * of its own, the tenant id as additional data, a purpose of its own so no other sealed value opens as a
 * code). Issuing one writes nothing anywhere; its single use is serialized by the tenant's code shard its id
 * names (src/objects/codes/code-object.ts), and what only the tenant knows (the user blocked or deleted since,
 * the session revoked since, the permissions now) is read at the exchange (redeem-code.ts).
 */

const CODE: SealPurpose = { prefix: "ac1.", info: "gatehouse authorization-code/v1", name: "authorization codes" };

/**
 * The longest sealed code handed out (characters): a plain login's seals into about 440; a larger grant (long
 * scopes, large custom claims from actions) is stored in the tenant object instead, as every code was before.
 */
export const MAX_SEALED_CODE_LENGTH = 1_500;

/** Whether a code is a sealed one (stored codes are 43 base64url characters). */
export const isSealedCode = (code: string): boolean => code.startsWith(CODE.prefix);

interface Sealed {
  i: string;
  c: string;
  u: string;
  s: string | null;
  r: string;
  g: SealedCodeContent["grant"];
  p: string | null;
  m: "S256" | "plain" | null;
  e: number;
}

/** Seals a code's record (the stored record's fields, less its hash); null when it would be too long to hand out. */
export async function sealCode(encryptionKey: string | undefined, tenantId: string, record: Omit<NewAuthorizationCode, "code_hash">): Promise<string | null> {
  const body: Sealed = {
    i: randomToken(16),
    c: record.client_id,
    u: record.user_id,
    s: record.session_id,
    r: record.redirect_uri,
    g: record.grant,
    p: record.code_challenge,
    m: record.code_challenge_method,
    e: record.expires_at,
  };
  const code = await seal(encryptionKey, CODE, tenantId, body);
  return code.length <= MAX_SEALED_CODE_LENGTH ? code : null;
}

/** A sealed code's facts, or null when it is not one or does not open for this tenant (expiry is the caller's). */
export async function openCode(encryptionKey: string | undefined, tenantId: string, code: string): Promise<SealedCodeContent | null> {
  const b = await unseal<Sealed>(encryptionKey, CODE, tenantId, code);
  if (!b || typeof b.i !== "string" || typeof b.u !== "string" || typeof b.c !== "string" || typeof b.e !== "number" || !b.g) return null;
  return {
    id: b.i,
    client_id: b.c,
    user_id: b.u,
    session_id: b.s ?? null,
    redirect_uri: b.r,
    grant: b.g,
    code_challenge: b.p ?? null,
    code_challenge_method: b.m ?? null,
    expires_at: b.e,
  };
}

/** Authorization codes live this long (RFC 6749 §4.1.2: short, at most 10 minutes). */
export const CODE_TTL_MS = 5 * 60 * 1000;

/**
 * A code ready to hand out: the plaintext for the client and, for a code that could not be sealed (issue 31:
 * too large), the hashed record the tenant object stores; a sealed code has no record (nothing is stored).
 */
interface PreparedCode {
  code: string;
  record: NewAuthorizationCode | null;
}

/**
 * The authorization code the response type asks for, or undefined when it asks for none: sealed (nothing
 * stored) unless its grant is too large to seal or the tenant consumes it itself (the device flow's approval,
 * `stored_code`); then it is stored with the login's commit, as every code was before issue 31.
 */
export async function prepareCode(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  grant: CodeGrant,
): Promise<PreparedCode | undefined> {
  if (!request.response_type.split(" ").includes("code")) return undefined;
  const facts = {
    client_id: client.client_id,
    user_id: user.user_id,
    session_id: sessionId,
    redirect_uri: request.redirect_uri,
    grant,
    code_challenge: request.code_challenge ?? null,
    code_challenge_method: request.code_challenge ? (request.code_challenge_method ?? "plain") : null,
    expires_at: now() + CODE_TTL_MS,
  };
  const sealed = request.stored_code ? null : await sealCode(c.env.ENCRYPTION_KEY, c.var.tenant.id, facts);
  if (sealed) return { code: sealed, record: null };
  const code = randomToken(32);
  return { code, record: { ...facts, code_hash: await hashSecret(code) } };
}
