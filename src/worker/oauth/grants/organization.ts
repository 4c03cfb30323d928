import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { organizationSettings } from "../../login/organization";
import { tenantObject } from "../../tenant/stubs";
import { type GrantContext, invalidGrant } from "./context";

/**
 * The `organization` parameter of the refresh and token-exchange grants (SPEC §4.1, issue 11): the client
 * must allow organizations, and the user must be a member of the organization named (id or name). Unknown
 * organizations and non-members read the same, so the answer reveals nothing about other organizations.
 */

/** A client that denies organizations (the default) cannot name one. */
export function assertOrganizationsAllowed(client: ClientRecord): void {
  if (organizationSettings(client).usage === "deny") {
    throw new OAuthError("invalid_request", "parameter organization is not allowed for this client");
  }
}

/** The organization (id or name) when the user is its member, else null. */
export const memberOf = (ctx: GrantContext, organization: string, userId: string) =>
  tenantObject(ctx.c.env, ctx.c.var.tenant.id).organizations().membership(organization, userId);

export const notAMember = (client: ClientRecord, organization: string) =>
  invalidGrant(client, `user is not a member of the organization ${organization}`);

/** Switches to an organization the user belongs to (the client must allow organizations). */
export async function switchOrganization(ctx: GrantContext, client: ClientRecord, organization: string, userId: string) {
  assertOrganizationsAllowed(client);
  const found = await memberOf(ctx, organization, userId);
  if (!found) throw notAMember(client, organization);
  return found;
}

/** The organization a token was issued in, while the user is still its member (else `invalid_grant`). */
export async function currentMembership(ctx: GrantContext, client: ClientRecord, orgId: string, userId: string) {
  const found = await memberOf(ctx, orgId, userId);
  if (!found) throw invalidGrant(client, `user is no longer a member of the organization ${orgId}`);
  return found;
}
