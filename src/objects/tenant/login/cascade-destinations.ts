/**
 * The internal destinations of the revocation cascades (cascade.ts): the refresh-token revocation in the
 * user's object and the back-channel logout POST. Both are `network` lane (claimed with a lease, delivered
 * outside any transaction, bounded by a timeout) and idempotent: a revocation revokes nothing twice, and a
 * logout token is signed afresh at each attempt (new jti), which an RP that already ended the session
 * answers with success again.
 */
import { backchannelLogoutUrl, LOGOUT_TOKEN_TYP, logoutTokenClaims, postLogoutToken, BACKCHANNEL_TIMEOUT_MS } from "../../../shared/backchannel";
import { importSigningKey, signJwt } from "../../../shared/crypto/jwt";
import type { EgressPolicy } from "../../../shared/egress-policy";
import { randomToken } from "../../../shared/crypto/random";
import { signingKeyAt } from "../../../shared/key-ring";
import { userObjectName } from "../../../shared/object-names";
import type { Sql } from "../../sql";
import { BACKCHANNEL_LOGOUT, type BackchannelLogoutPayload, REFRESH_REVOCATION, type RefreshRevocationPayload } from "./cascade";
import { toClient, toSigningKey } from "../oauth/rows";
import { type Destination, internalDestination } from "../core/relay";

/** What the internal destinations need from the deployment. */
export interface CascadeEnv {
  /** The user objects (refresh-token families). */
  users: Env["USER"];
  /** Opens the tenant's signing keys (logout tokens are signed like ID tokens). */
  encryptionKey: string | undefined;
  /** The apex issuer, for sessions stored before their own issuer was recorded. */
  issuer: string;
  /** Where tenant-chosen URLs may point (webhooks, back-channel logout), checked before each delivery. */
  egress: EgressPolicy;
}

/** Bound of one call to a user object (the relay's lease is sized from it). */
export const USER_OBJECT_TIMEOUT_MS = 10_000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Revokes the cascade's refresh tokens in the user's object (SPEC §3.3); a failing call is retried. */
export function refreshRevocationDestination(tenantId: string, env: CascadeEnv): Destination {
  return internalDestination<RefreshRevocationPayload>({
    name: "refresh_revocation",
    eventType: REFRESH_REVOCATION,
    timeoutMs: USER_OBJECT_TIMEOUT_MS,
    async deliver(payload) {
      const user = env.users.getByName(userObjectName(tenantId, payload.user_id));
      await withTimeout(Promise.resolve(user.revokeRefreshTokens(payload.session_ids, payload.ended_session_ids ?? [])), USER_OBJECT_TIMEOUT_MS, "user object");
    },
  });
}

/**
 * Signs a logout token for one client and POSTs it to the client's registered back-channel URI (OIDC
 * Back-Channel Logout 1.0 §2.4-2.5). The token is signed here, in the relay: it is short-lived and must be
 * fresh at each attempt, so the worker cannot sign it ahead. One RSA signature per notification, in an
 * alarm, never on a request path. The key and algorithm are the client's ID-token ones, so an RP verifies
 * it exactly as it verifies its ID tokens. A client that has since dropped its URI, or was deleted, has
 * nothing to receive.
 */
export function backchannelLogoutDestination(sql: Sql, env: CascadeEnv): Destination {
  const imported = new Map<string, Promise<CryptoKey>>();
  return internalDestination<BackchannelLogoutPayload>({
    name: "backchannel_logout",
    eventType: BACKCHANNEL_LOGOUT,
    timeoutMs: BACKCHANNEL_TIMEOUT_MS,
    async deliver(payload, _event, now) {
      const row = sql.first<Record<string, unknown>>`SELECT * FROM clients WHERE client_id = ${payload.client_id}`;
      const client = row ? toClient(row) : null;
      const url = client ? backchannelLogoutUrl(client) : null;
      if (!client || !url) return;
      const alg = (client.extra.jwt_configuration as { alg?: string } | undefined)?.alg === "PS256" ? "PS256" : "RS256";
      const rows = sql.all<Record<string, unknown>>`SELECT * FROM signing_keys WHERE type = 'jwt_signing'`.map(toSigningKey);
      const record = signingKeyAt(rows, now, "jwt_signing", alg);
      if (!record) throw new Error(`the tenant has no active ${alg} signing key`);
      let key = imported.get(record.kid);
      if (!key) {
        key = importSigningKey(env.encryptionKey, record);
        imported.set(record.kid, key);
        key.catch(() => imported.delete(record.kid));
      }
      const claims = logoutTokenClaims(
        { issuer: payload.issuer ?? env.issuer, client_id: client.client_id, user_id: payload.user_id, session_id: payload.session_id },
        Math.floor(now / 1000),
        randomToken(16),
      );
      await postLogoutToken(url, await signJwt(claims, await key, record.kid, record.alg, LOGOUT_TOKEN_TYP), env.egress);
    },
  });
}

/** The login capability's internal destinations, in relay order: refresh revocation, then back-channel logout. */
export function cascadeDestinations(sql: Sql, tenantId: string, env: CascadeEnv): Destination[] {
  return [refreshRevocationDestination(tenantId, env), backchannelLogoutDestination(sql, env)];
}
