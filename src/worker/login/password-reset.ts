/**
 * Password reset requests (issue 29 point 1): the login page's "Forgot password?" form and the reference
 * platform's POST /dbconnections/change_password. Both answer the same whether or not the address has an
 * account (no account enumeration); when it has one, the tenant object stores a single-use ticket (its hash
 * only) and queues the email with the link in one commit, and the relay sends it through the tenant's email
 * provider (the development sink under `npm start`).
 */
import { z } from "zod";
import { now } from "../../shared/clock";
import { randomToken } from "../../shared/crypto/random";
import { sealEmail } from "../../shared/messaging/sealed-mail";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import { normalizeEmail } from "../../shared/schemas/users";
import type { TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { readAuthApiBody } from "../http/body";
import { tenantObject } from "../tenant/stubs";
import { dbConnectionsTarget } from "./connection";
import { hashSecret } from "./session";
import { isEmailAddress } from "../../shared/email-address";
import { ticketUrl } from "./ticket-links";
import { resetAccountFromScripts } from "../actions/custom-db";
import { composeEmail } from "../messaging/email-templates";
import { builtInEmail } from "../../shared/i18n/email-texts";
import { emailLanguage } from "../../shared/i18n/negotiate";

/**
 * How long a self-service reset link stays valid. Shorter than the reference platform's 5-day template
 * default: the link is a password, and an inbox is read within the hour it is asked for. @default 86,400 s
 */
export const RESET_LINK_TTL_S = 86_400;

/** The reference platform's answer to POST /dbconnections/change_password, account or not. */
export const RESET_REQUESTED_TEXT = "We've just sent you an email to reset your password.";

/** The path of the page a reset link opens. */
export const RESET_PAGE_PATH = "/u2/reset-password/change";

export interface ResetRequest {
  config: TenantConfig;
  client: ClientRecord;
  connection: Pick<ConnectionRecord, "name">;
  email: string;
  organizationId?: string | null;
  /** The login transaction the "Forgot password?" link came from (the way back after the reset). */
  loginState?: string | null;
  /** The language of that login's pages (issue 29 point 2): the email's, and its link page's. */
  language?: string;
}

/** Stores the ticket and queues the email when the address has an account; logs `fcpr` when not. */
export async function requestPasswordReset(c: AppContext, request: ResetRequest): Promise<void> {
  const email = normalizeEmail(request.email);
  const tenant = tenantObject(c.env, c.var.tenant.id);
  const found = isEmailAddress(email) ? await tenant.users().findByEmail(request.connection.name, email) : null;
  // Issue 32: on a custom database, `get_user` may know a person not moved yet.
  const account = found ?? (isEmailAddress(email) ? await resetAccountFromScripts(c, request.config, request.connection.name, email) : null);
  const clientId = request.client.client_id;
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: clientId } });
  const ticket = randomToken(32);
  const data = {
    email,
    connection: request.connection.name,
    client_id: clientId,
    organization_id: request.organizationId ?? null,
    result_url: null,
    mark_email_as_verified: false,
    include_email_in_redirect: false,
    login_state: request.loginState ?? null,
  };
  if (!account) {
    await tenant.userTickets(audit).requestReset({ user_id: null, ticket_hash: await hashSecret(ticket), expires_at: now(), data });
    return;
  }
  const url = ticketUrl(c, RESET_PAGE_PATH, ticket);
  // Issue 29 point 2: the login's language when the request came from one, else the user's own, else the tenant's.
  const language = request.language ?? emailLanguage({ user: "user_id" in account ? account : null, enabledLocales: request.config.settings.enabled_locales });
  const builtIn = builtInEmail(language, "reset_email", { appName: request.client.name, email, url });
  // The tenant's reset_email template, when enabled: its text, its link lifetime and where the link leads after.
  const facts = { config: request.config, user: "user_id" in account ? account : { email }, client: request.client, connection: request.connection.name, url, language };
  const { message, template } = await composeEmail(c, "reset_email", facts, builtIn);
  const ttlS = template?.urlLifetimeInSeconds || RESET_LINK_TTL_S;
  const after = template?.resultUrl ? { result_url: template.resultUrl, include_email_in_redirect: template.includeEmailInRedirect !== false } : {};
  await tenant.userTickets(audit).requestReset({
    user_id: account.user_id,
    ticket_hash: await hashSecret(ticket),
    expires_at: now() + ttlS * 1000,
    data: { ...data, ...after, language },
    message: await sealEmail(c.env.ENCRYPTION_KEY, email, message),
  });
}

/** Request body of POST /dbconnections/change_password; unknown fields are ignored, as SDKs send extras. */
const changePasswordBody = z.object({
  client_id: z.string().min(1).max(64),
  email: z.string().min(1).max(254),
  connection: z.string().min(1).max(128),
  organization: z.string().min(1).max(64).optional(),
});

/**
 * POST /dbconnections/change_password (the reference platform's Authentication API): sends the change
 * password email for a database connection of the application. Answers 200 with the same text whether or
 * not the address has an account; an unknown client or connection is a 400 (those are not secrets).
 */
export async function dbChangePasswordEndpoint(c: AppContext): Promise<Response> {
  const body = await readAuthApiBody(c, changePasswordBody);
  const { config, client, connection } = await dbConnectionsTarget(c, body.client_id, body.connection);
  await requestPasswordReset(c, { config, client, connection, email: body.email, organizationId: body.organization ?? null });
  c.header("Cache-Control", "no-store");
  return c.text(RESET_REQUESTED_TEXT, 200);
}
