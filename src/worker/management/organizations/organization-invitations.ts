import { builtInEmail } from "../../../shared/i18n/email-texts";
import { emailLanguage } from "../../../shared/i18n/negotiate";
import { z } from "zod";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import { parseListQuery } from "../../../shared/pagination/list-query";
import { createInvitationBody, DEFAULT_INVITATION_TTL_S } from "../../../shared/schemas/organizations";
import type { TenantConfig } from "../../../shared/types";
import type { InvitationRecord, OrganizationRecord } from "../../../shared/schemas/organizations";
import type { AppContext } from "../../context";
import { composeEmail } from "../../messaging/email-templates";
import { sendEmail } from "../../messaging/senders";
import { auditContext } from "../../http/audit";
import { clientIn, tenantConfig } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { defineRoute } from "../define";
import { LIST_QUERY, projection } from "../list-response";
import { targetTenant } from "../tenant-scoped";

/** SPEC §4.2: invitations sort by `field:1|-1` over these, newest first by default. */
const SORTS = ["created_at:-1", "created_at:1", "expires_at:1", "expires_at:-1"];

/**
 * Where this tenant's login pages live: the request's own issuer when it came to the tenant's host, else
 * the tenant's subdomain of the apex (the control plane: the apex issuer).
 */
function tenantBase(c: AppContext): string {
  const { tenant, settings } = c.var;
  if (tenant.via === "subdomain" || tenant.via === "custom_domain") return tenant.issuer;
  if (tenant.id === settings.controlPlaneTenantId) return settings.issuer;
  return `${settings.issuerProtocol}//${tenant.id}.${settings.apexHost}/`;
}

/**
 * SPEC §2.7: the invitation link. It points at the application's `initiate_login_uri`, else the tenant's
 * login URL setting (`default_redirection_uri`), else Gatehouse's own invitation landing (/u2/invitation),
 * with `invitation` (the ticket), `organization`, `organization_name` and `ticket` parameters; the
 * application forwards `invitation` and `organization` to /authorize.
 */
function invitationUrl(c: AppContext, config: TenantConfig, clientId: string, org: OrganizationRecord, ticket: string): string {
  const client = clientIn(config, clientId);
  const own = client?.extra.initiate_login_uri;
  const tenantLogin = (config.settings as { default_redirection_uri?: unknown }).default_redirection_uri;
  const base = typeof own === "string" ? own : typeof tenantLogin === "string" ? tenantLogin : new URL("u2/invitation", tenantBase(c)).toString();
  const url = new URL(base);
  url.searchParams.set("invitation", ticket);
  url.searchParams.set("organization", org.id);
  url.searchParams.set("organization_name", org.name);
  url.searchParams.set("ticket", ticket);
  return url.toString();
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string);

/** The invitation email (plain text and HTML, every interpolated value escaped in the HTML). */
/**
 * The built-in invitation email in `language` (issue 29 point 4: every email in the user's language): the
 * catalogue's text, and the same paragraphs as HTML with the invitation's link.
 */
function invitationEmail(invitation: InvitationRecord, org: OrganizationRecord, appName: string, language: string) {
  const vars = { inviter: invitation.inviter.name, orgName: org.display_name ?? org.name, appName, url: invitation.invitation_url, expires: new Date(invitation.expires_at).toUTCString() };
  const { subject, text } = builtInEmail(language, "user_invitation", vars);
  const html = text
    .split("\n\n")
    .map((paragraph) => `<p>${escapeHtml(paragraph).replaceAll(escapeHtml(vars.url), `<a href="${escapeHtml(vars.url)}">${escapeHtml(vars.url)}</a>`).replaceAll("\n", "<br>")}</p>`)
    .join("\n");
  return { to: invitation.invitee.email, subject, text, html };
}

const INVITATION_QUERY = LIST_QUERY.extend({
  fields: z.string().optional().describe("comma-separated fields to include (or exclude with include_fields=false)"),
  include_fields: z.string().optional().describe("true (default) or false"),
  sort: z.string().optional().describe("created_at:-1 (default), created_at:1, expires_at:1, expires_at:-1"),
});

async function loadOrganization(c: AppContext, id: string): Promise<OrganizationRecord> {
  const org = await targetTenant(c).organizations().get(id);
  if (!org) throw problem("inexistent_organization");
  return org;
}

export const invitationRoutes = [
  defineRoute({
    method: "post",
    path: "/organizations/{id}/invitations",
    scope: "create:organization_invitations",
    summary: "Invite someone to the organization (ttl_sec default 604800, max 2592000); sends the invitation email unless send_invitation_email is false",
    body: createInvitationBody,
    status: 201,
    async handler(c, { params, body }) {
      const org = await loadOrganization(c, params.id);
      const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
      if (!clientIn(config, body.client_id)) throw problem("inexistent_client");
      const ticket = randomId("", 32);
      const ttlS = body.ttl_sec || DEFAULT_INVITATION_TTL_S;
      const invitation = unwrap(
        await targetTenant(c).organizations(auditContext(c)).createInvitation({
          id: randomId("uinv_", 16),
          organization_id: org.id,
          ticket_id: ticket,
          inviter_name: body.inviter.name,
          invitee_email: body.invitee.email,
          client_id: body.client_id,
          connection_id: body.connection_id ?? null,
          app_metadata: body.app_metadata ?? null,
          user_metadata: body.user_metadata ?? null,
          roles: body.roles ?? [],
          invitation_url: invitationUrl(c, config, body.client_id, org, ticket),
          ttl_ms: ttlS * 1000,
        }),
      );
      if (body.send_invitation_email !== false) {
        const client = clientIn(config, body.client_id) ?? null;
        try {
          // The tenant's user_invitation template, when enabled (with `inviter` and the invitation's `url`).
          // The invitee's language from the user_metadata the invitation carries, else the tenant's default.
          const language = emailLanguage({ user: { user_metadata: body.user_metadata ?? null }, enabledLocales: config.settings.enabled_locales });
          const { to, ...builtIn } = invitationEmail(invitation, org, client?.name ?? "the application", language);
          const facts = { config, client, organization: org, user: { email: to }, url: invitation.invitation_url, language, extra: { inviter: { name: invitation.inviter.name } } };
          const { message } = await composeEmail(c, "user_invitation", facts, builtIn);
          await sendEmail(c, { to, ...message });
        } catch (error) {
          // The invitation stands (its URL is in this response); the failed delivery is reported, not hidden.
          console.error(`invitation ${invitation.id}: email not sent: ${(error as Error).message}`);
        }
      }
      return c.json(invitation, 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}/invitations",
    scope: "read:organization_invitations",
    summary: "List invitations (page 0-based, per_page default 50, include_totals: {invitations, start, limit, length}, fields, sort)",
    query: INVITATION_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = parseListQuery(c.req.query(), { checkpoint: false, sorts: SORTS });
      if (q.mode !== "offset") throw problem("checkpoint_unsupported");
      const project = projection(c);
      const [column, order] = q.sort.split(":") as ["created_at" | "expires_at", string];
      const window = { offset: q.page * q.perPage, limit: q.perPage, sort: { column, descending: order === "-1" } };
      const { items } = unwrap(await targetTenant(c).organizations().listInvitations(params.id, window));
      const invitations = items.map((i) => project(i));
      // SPEC §4.2: the envelope has no total.
      return c.json(q.includeTotals ? { invitations, start: q.page * q.perPage, limit: q.perPage, length: invitations.length } : invitations);
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}/invitations/{invitation_id}",
    scope: "read:organization_invitations",
    summary: "One invitation (fields, include_fields)",
    query: z.looseObject({ fields: INVITATION_QUERY.shape.fields, include_fields: INVITATION_QUERY.shape.include_fields }),
    status: 200,
    async handler(c, { params }) {
      const project = projection(c);
      return c.json(project(unwrap(await targetTenant(c).organizations().getInvitation(params.id, params.invitation_id))));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/organizations/{id}/invitations/{invitation_id}",
    scope: "delete:organization_invitations",
    summary: "Delete (revoke) an invitation",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).organizations(auditContext(c)).deleteInvitation(params.id, params.invitation_id));
      return c.body(null, 204);
    },
  }),
];
