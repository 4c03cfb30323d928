import { now } from "../../../shared/clock";
import { randomToken } from "../../../shared/crypto/random";
import { problem } from "../../../shared/errors";
import {
  emailVerificationTicketBody,
  type PasswordChangeTicketInput,
  passwordChangeTicketBody,
  TICKET_DEFAULT_TTL_S,
} from "../../../shared/schemas/tickets";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { configOf, DATABASE_STRATEGY } from "../../login/connection";
import { RESET_PAGE_PATH } from "../../login/password-reset";
import { hashSecret } from "../../login/session";
import { ticketUrl } from "../../login/ticket-links";
import { clientIn } from "../../tenant/config-cache";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** A ticket's expiry: `ttl_sec`, or the reference platform's 5 days when absent or 0. */
const expiresAt = (ttlSec: number | undefined) => now() + (ttlSec ? ttlSec : TICKET_DEFAULT_TTL_S) * 1000;

/** The client and organization a ticket names must exist (404 in the reference shape otherwise). */
async function checkTargets(c: AppContext, body: { client_id?: string | undefined; organization_id?: string | undefined }) {
  const config = await configOf(c);
  if (body.client_id !== undefined && !clientIn(config, body.client_id)) throw problem("inexistent_client");
  if (body.organization_id !== undefined && !(await targetTenant(c).organizations().get(body.organization_id))) throw problem("inexistent_organization");
  return config;
}

/** The database account whose password the ticket changes: by user_id, or by email in connection_id. */
async function resetAccount(c: AppContext, body: PasswordChangeTicketInput) {
  const config = await checkTargets(c, body);
  if (body.user_id !== undefined) {
    const user = await targetTenant(c).users().get(body.user_id);
    if (!user) throw problem("inexistent_user");
    const connection = config.connections.find((x) => x.name === user.connection);
    if (connection?.strategy !== DATABASE_STRATEGY || !user.email) throw problem("ticket_no_database_account");
    return { user_id: user.user_id, email: user.email, connection: connection.name };
  }
  const connection = config.connections.find((x) => x.id === body.connection_id);
  if (!connection) throw problem("inexistent_connection");
  if (connection.strategy !== DATABASE_STRATEGY) throw problem("ticket_no_database_account");
  const account = await targetTenant(c).users().findByEmail(connection.name, body.email ?? "");
  if (!account) throw problem("inexistent_user");
  return { user_id: account.user_id, email: account.email as string, connection: connection.name };
}

/**
 * User tickets (issue 29 point 1; the reference platform's /tickets): links an administrator hands to a
 * user, single use, only their hash stored. Scope `create:user_tickets`, as the reference platform has it.
 */
export const ticketRoutes = [
  defineRoute({
    method: "post",
    path: "/tickets/password-change",
    scope: "create:user_tickets",
    summary:
      "A single-use link (default 5 days, ttl_sec) to the page that sets a database user's new password under the connection's policy; the user by user_id, or by email with connection_id; the reset ends the user's sessions and refresh tokens",
    body: passwordChangeTicketBody,
    status: 201,
    async handler(c, { body }) {
      const account = await resetAccount(c, body);
      const ticket = randomToken(32);
      await targetTenant(c)
        .userTickets(auditContext(c))
        .requestReset({
          user_id: account.user_id,
          ticket_hash: await hashSecret(ticket),
          expires_at: expiresAt(body.ttl_sec),
          data: {
            email: account.email,
            connection: account.connection,
            client_id: body.client_id ?? null,
            organization_id: body.organization_id ?? null,
            result_url: body.result_url ?? null,
            mark_email_as_verified: body.mark_email_as_verified === true,
            include_email_in_redirect: body.includeEmailInRedirect === true,
            login_state: null,
          },
        });
      return c.json({ ticket: ticketUrl(c, RESET_PAGE_PATH, ticket) }, 201);
    },
  }),
  defineRoute({
    method: "post",
    path: "/tickets/email-verification",
    scope: "create:user_tickets",
    summary: "A single-use link (default 5 days, ttl_sec) that marks the user's email verified, then goes to result_url when given",
    body: emailVerificationTicketBody,
    status: 201,
    async handler(c, { body }) {
      await checkTargets(c, body);
      const user = await targetTenant(c).users().get(body.user_id);
      if (!user) throw problem("inexistent_user");
      if (!user.email) throw problem("verification_email_no_address");
      const ticket = randomToken(32);
      await targetTenant(c)
        .userTickets(auditContext(c))
        .issueVerification({
          user_id: user.user_id,
          email: user.email,
          client_id: body.client_id ?? null,
          organization_id: body.organization_id ?? null,
          result_url: body.result_url ?? null,
          include_email_in_redirect: body.includeEmailInRedirect === true,
          ticket_hash: await hashSecret(ticket),
          expires_at: expiresAt(body.ttl_sec),
        });
      return c.json({ ticket: ticketUrl(c, "/u2/email-verification", ticket) }, 201);
    },
  }),
];
