import { z } from "zod";
import { DbConnectionError, OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { readAuthApiBody } from "../http/body";
import { dbConnectionsTarget, isSignupDisabled } from "./connection";
import { signUpDatabaseUser } from "./signup";

/** The reference platform's sign-up error codes: rendered as `{name, code, description, statusCode}`. */
type SignupErrorCode = "invalid_signup" | "invalid_password";
const signupError = (code: SignupErrorCode, description: string) => new DbConnectionError(400, code, description);

/** The reference platform's user_metadata rule for sign-ups: at most 10 string properties. */
const userMetadata = z
  .record(z.string().max(100), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 10, "user_metadata may have at most 10 properties");

/** Request body of POST /dbconnections/signup (SPEC §4.1); unknown fields are ignored, as SDKs send extras. */
const signupBody = z.object({
  client_id: z.string().min(1),
  email: z.string().min(1),
  password: z.string().min(1),
  connection: z.string().min(1),
  user_metadata: userMetadata.optional(),
  name: z.string().max(300).optional(),
  nickname: z.string().max(300).optional(),
  /** Used only by connections with `requires_username` (the reference platform's rule: no whitespace, no @). */
  username: z.string().min(1).max(128).regex(/^[^\s@]+$/, "username must not contain whitespace or @").optional(),
});

/**
 * POST /dbconnections/signup (SPEC §4.1): self-service sign-up into a database connection, for browser SDKs
 * (CORS from the application's web_origins) and servers. Answers the new user: `_id` (the id without the
 * `auth0|` prefix, as the reference platform does), `id` (the full user_id), email and timestamps.
 */
export async function dbSignupEndpoint(c: AppContext): Promise<Response> {
  const body = await readAuthApiBody(c, signupBody);
  const { client, connection } = await dbConnectionsTarget(c, body.client_id, body.connection);
  if (isSignupDisabled(connection)) throw new OAuthError("access_denied", "Public signup is disabled for this connection", 403);

  const username = connection.options?.requires_username === true ? body.username : undefined;
  if (connection.options?.requires_username === true && username === undefined) throw new OAuthError("invalid_request", "username is required for this connection");
  const result = await signUpDatabaseUser(c, connection, {
    email: body.email,
    password: body.password,
    ...(body.user_metadata ? { user_metadata: body.user_metadata } : {}),
    ...(body.name ? { name: body.name } : {}),
    ...(body.nickname ? { nickname: body.nickname } : {}),
    ...(username !== undefined ? { username } : {}),
  }, client.client_id);
  if (!result.ok) {
    const { code, message } = result.failure;
    if (code === "USER_EXISTS") throw signupError("invalid_signup", "Invalid sign up");
    if (code === "REGISTRATION_DENIED") throw new DbConnectionError(403, "access_denied", message);
    if (code === "INVALID_EMAIL") throw new OAuthError("invalid_request", "email is not a valid email address");
    if (code === "PASSWORD_BREACHED") throw signupError("invalid_password", message);
    throw signupError("invalid_password", `Password is too weak: ${message}`);
  }
  const { user } = result;
  c.header("Cache-Control", "no-store");
  return c.json({
    _id: user.user_id.slice(user.user_id.indexOf("|") + 1),
    id: user.user_id,
    email: user.email,
    ...(user.username ? { username: user.username } : {}),
    email_verified: user.email_verified,
    ...(body.user_metadata ? { user_metadata: user.user_metadata } : {}),
    created_at: user.created_at,
    updated_at: user.updated_at,
  });
}
