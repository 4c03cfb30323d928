/**
 * POST /api/v2/jobs/verification-email and the link it sends (the reference platform's verification email
 * job): the worker checks the request and writes the email; the tenant object creates the job, a single-use
 * ticket (only its hash is stored) and the queued email (its text sealed) in one commit, and answers the job
 * `pending`, as the reference platform does. The relay sends the email through the configured provider (or
 * the development sink) and marks the job `completed`, or `failed` once it gives up. The link, GET /u2/email-verification?ticket=..., marks the address verified
 * once: the tenant object consumes the ticket with one conditional UPDATE (a second use finds nothing).
 */
import { problem } from "../../shared/errors";
import { randomToken } from "../../shared/crypto/random";
import { now } from "../../shared/clock";
import type { VerificationEmailInput } from "../../shared/schemas/jobs";
import type { JobRecord } from "../../shared/types";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { configOf } from "../login/connection";
import { sendMessage, shellFor } from "../login/render";
import { hashSecret } from "../login/session";
import { resultRedirect } from "../login/ticket-links";
import { mailRoute } from "../../shared/messaging/mail-route";
import { sealEmail } from "../../shared/messaging/sealed-mail";
import { builtInEmail } from "../../shared/i18n/email-texts";
import { emailLanguage, userLanguage } from "../../shared/i18n/negotiate";
import { composeEmail } from "../messaging/email-templates";
import { targetTenant } from "../management/tenant-scoped";
import { clientIn } from "../tenant/config-cache";
import { verifyThroughScript } from "../actions/custom-db";
import { tenantObject } from "../tenant/stubs";

/** How long a verification link stays valid (the reference platform's email verification ticket default). @default 432,000 s (5 days) */
export const VERIFICATION_LINK_TTL_S = 432_000;

/** The link on the tenant's own host (apex hosts name the tenant in the query, as enrollment tickets do). */
function verificationUrl(c: AppContext, ticket: string): string {
  const tenant = c.var.tenant;
  const base = tenant.issuer.endsWith("/") ? tenant.issuer : `${tenant.issuer}/`;
  const url = new URL(`${base}u2/email-verification`);
  url.searchParams.set("ticket", ticket);
  const ownHost = tenant.via === "subdomain" || tenant.via === "custom_domain" || tenant.id === c.var.settings.controlPlaneTenantId;
  if (!ownHost) url.searchParams.set("tenant_id", tenant.id);
  return url.toString();
}

/** Which address the link verifies: the user's own, or the chosen linked identity's. */
async function addressOf(c: AppContext, body: VerificationEmailInput): Promise<{ email: string; connection: string | null; user: UserRecord }> {
  const user = await targetTenant(c).users().get(body.user_id);
  if (!user) throw problem("inexistent_user");
  let email = user.email;
  let connection: string | null = null;
  if (body.identity) {
    const { user_id: id, provider, connection_id } = body.identity;
    const config = await configOf(c);
    const index = user.identities.findIndex(
      (i) => i.provider === provider && (i.user_id === id || `${i.provider}|${i.user_id}` === id) && (connection_id === undefined || config.connections.find((x) => x.id === connection_id)?.name === i.connection),
    );
    if (index < 0) throw problem("verification_identity_not_found");
    if (index > 0) {
      const identity = user.identities[index];
      connection = identity?.connection ?? null;
      email = typeof identity?.profileData?.email === "string" ? identity.profileData.email : null;
    }
  }
  if (!email) throw problem("verification_email_no_address");
  return { email, connection, user };
}

/** The route's work; answers the pending job (GET /jobs/{id} says when the email went). */
export async function sendVerificationEmail(c: AppContext, body: VerificationEmailInput): Promise<JobRecord> {
  const config = await configOf(c);
  const client = body.client_id === undefined ? undefined : clientIn(config, body.client_id);
  if (body.client_id !== undefined && !client) throw problem("inexistent_client");
  const organization = body.organization_id === undefined ? null : await targetTenant(c).organizations().get(body.organization_id);
  if (body.organization_id !== undefined && !organization) throw problem("inexistent_organization");
  const { email, connection, user } = await addressOf(c, body);
  // Refuse before creating anything when no way out is configured (never a job that cannot run).
  if (mailRoute(c.env).kind === "none") throw problem("email_provider_missing");
  const ticket = randomToken(32);
  const url = verificationUrl(c, ticket);
  const friendly = config.settings.friendly_name;
  const appName = client?.name ?? (typeof friendly === "string" ? friendly : c.var.tenant.id);
  // Issue 29 point 2: sent outside a login, in the user's own language when the tenant offers it, else the tenant's.
  const language = emailLanguage({ user, enabledLocales: config.settings.enabled_locales });
  // The tenant's verify_email template, when enabled: its text, its link lifetime and where the link leads after.
  const facts = { config, user: { ...user, email }, client: client ?? null, connection: connection ?? user.identities[0]?.connection ?? null, organization, url, language };
  const { message, template } = await composeEmail(c, "verify_email", facts, builtInEmail(language, "verify_email", { appName, email, url }));
  const ttlS = template?.urlLifetimeInSeconds || VERIFICATION_LINK_TTL_S;
  const audit = auditContext(c);
  return targetTenant(c)
    .emailVerification(audit)
    .start({
      user_id: body.user_id,
      email,
      connection,
      client_id: body.client_id ?? null,
      organization_id: body.organization_id ?? null,
      ticket_hash: await hashSecret(ticket),
      expires_at: now() + ttlS * 1000,
      message: await sealEmail(c.env.ENCRYPTION_KEY, email, message),
      ...(template?.resultUrl ? { result_url: template.resultUrl, include_email_in_redirect: template.includeEmailInRedirect !== false } : {}),
      audit,
    });
}

const PAGES = {
  invalid: { status: 400, code: "INVALID_TICKET", text: "verification-link-expired", title: "Link expired", message: "This verification link has expired or was already used" },
  email_changed: { status: 409, code: "EMAIL_CHANGED", title: "Email changed", message: "The email address changed since this link was sent" },
} as const;

/** GET /u2/email-verification?ticket=...: consumes the link once and says what happened. */
export async function emailVerificationPage(c: AppContext): Promise<Response> {
  const config = await configOf(c);
  const ticket = c.req.query("ticket") ?? "";
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(ticket)) {
    const { status, ...page } = PAGES.invalid;
    return sendMessage(c, shellFor(c, config), page, status);
  }
  const audit = auditContext(c, { actor: { type: "anonymous", id: null } });
  const stub = tenantObject(c.env, c.var.tenant.id);
  const ticketHash = await hashSecret(ticket);
  // Issue 32: a custom database without import mode is the store: its verify script runs first; when it
  // fails, nothing is written and the link stays usable.
  const named = await stub.userTickets(audit).peekVerification(ticketHash);
  const user = named ? await stub.users().get(named.user_id) : null;
  if (user && (await verifyThroughScript(c, config, user))) {
    return sendMessage(c, shellFor(c, config), { code: "VERIFY_FAILED", title: "Email not verified", message: "Your email address could not be verified right now. Try the link again later." }, 400);
  }
  // Jobs' links and POST /tickets/email-verification's alike; a ticket's result_url is where it goes next.
  const outcome = await stub.userTickets(audit).verifyEmail(ticketHash);
  // Issue 29 point 2: the user's own language, as the email was written in; else the browser's.
  const own = (user && userLanguage(user)) ?? undefined;
  if (!outcome.ok) {
    const { status, ...page } = PAGES[outcome.reason];
    return sendMessage(c, shellFor(c, config, undefined, own), page, status);
  }
  if (outcome.result_url) {
    const message = "Your email was verified. You can continue using the application.";
    return c.redirect(resultRedirect(outcome.result_url, message, outcome.include_email_in_redirect ? outcome.email : null), 302);
  }
  const shell = shellFor(c, config, undefined, own);
  const t = (id: "title" | "description") => shell.text.t("email-verification", "email-verification-result", id, { email: outcome.email });
  return sendMessage(c, shell, { title: t("title"), message: t("description") }, 200);
}
