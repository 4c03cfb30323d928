import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";

/**
 * A ticket link on the tenant's own host (apex hosts name the tenant in the query, as enrollment tickets and
 * verification emails do). The secret rides in the query; the pages answer `Referrer-Policy: no-referrer`.
 */
export function ticketUrl(c: AppContext, path: string, ticket: string): string {
  const tenant = c.var.tenant;
  const base = tenant.issuer.endsWith("/") ? tenant.issuer : `${tenant.issuer}/`;
  const url = new URL(`${base}${path.replace(/^\//, "")}`);
  url.searchParams.set("ticket", ticket);
  const ownHost = tenant.via === "subdomain" || tenant.via === "custom_domain" || tenant.id === c.var.settings.controlPlaneTenantId;
  if (!ownHost) url.searchParams.set("tenant_id", tenant.id);
  return url.toString();
}

/**
 * Where a used ticket sends the person, as the reference platform does: its `result_url` with `success`,
 * `message` and (with includeEmailInRedirect) `email` added to the query.
 */
export function resultRedirect(resultUrl: string, message: string, email: string | null): string {
  const url = new URL(resultUrl);
  if (email) url.searchParams.set("email", email);
  url.searchParams.set("message", message);
  url.searchParams.set("success", "true");
  return url.toString();
}

/** The application's login route (`initiate_login_uri`), when it has one. */
export const applicationLoginRoute = (client: ClientRecord | undefined | null): string | null =>
  typeof client?.extra.initiate_login_uri === "string" ? client.extra.initiate_login_uri : null;
