import { now } from "../../shared/clock";
import { DEFAULT_DATABASE_CONNECTION } from "../../shared/schemas/connections";
import { randomToken } from "../../shared/crypto/random";
import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { readOAuthParams } from "../http/body";
import { tenantObject } from "../tenant/stubs";
import { configOf, databaseConnection } from "./connection";
import { assertClientOrigin } from "./cors";
import { LOGIN_FAILURE_MESSAGES, verifyPassword } from "./password";
import { hashSecret } from "./session";
import { clientIn } from "../tenant/config-cache";

/** A login ticket must be redeemed at /authorize within this time. */
export const LOGIN_TICKET_TTL_MS = 5 * 60 * 1000;

/** credential_type values the reference SDKs send (password-realm grant URI of any vendor host, or password). */
const isPasswordCredential = (type: string) => type === "password" || /\/oauth\/grant-type\/password-realm$/.test(type);

/**
 * POST /co/authenticate (cross-origin authentication, SPEC §4.1 rule 5): verifies a username and password
 * with the login form's logic and lockout, and answers a single-use login ticket (only its hash is stored)
 * for `/authorize?login_ticket=`. `co_verifier` and `co_id` are the reference platform's fallback
 * (third-party cookie) values; random, as no /co/verify exists.
 */
export async function coAuthenticateEndpoint(c: AppContext): Promise<Response> {
  const params = await readOAuthParams(c.req.raw);
  const param = (name: string) => {
    const value = params[name];
    if (!value) throw new OAuthError("invalid_request", `Missing required parameter: ${name}`);
    return value;
  };
  const clientId = param("client_id");
  const config = await configOf(c);
  const client = clientIn(config, clientId);
  if (!client) throw new OAuthError("invalid_request", `Unknown client: ${clientId}`);
  assertClientOrigin(c, client);
  const username = param("username");
  const password = param("password");
  const credentialType = params.credential_type;
  if (credentialType !== undefined && !isPasswordCredential(credentialType)) {
    throw new OAuthError("invalid_request", `Unsupported credential_type: ${credentialType}`);
  }
  const connection = databaseConnection(config, params.realm || DEFAULT_DATABASE_CONNECTION, client);
  if (!connection) throw new OAuthError("invalid_request", "connection not found");

  const check = await verifyPassword(c, username, password, connection, client.client_id);
  if (!check.ok) throw new OAuthError(check.code === "PASSWORD_LEAKED" ? "password_leaked" : "access_denied", LOGIN_FAILURE_MESSAGES[check.code], check.status);

  const ticket = randomToken(32);
  await tenantObject(c.env, c.var.tenant.id).tickets().create({
    ticket_hash: await hashSecret(ticket),
    client_id: client.client_id,
    user_id: check.user.user_id,
    expires_at: now() + LOGIN_TICKET_TTL_MS,
  });
  c.header("Cache-Control", "no-store");
  return c.json({ login_ticket: ticket, co_verifier: randomToken(32), co_id: randomToken(16) });
}
