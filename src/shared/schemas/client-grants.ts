import { z } from "zod";
import { scopeValue } from "./resource-servers";

const scope = z.array(scopeValue).max(1000);

/**
 * The reference platform's organization settings of a grant: whether tokens of this grant may (`allow`),
 * must (`require`) or may not (`deny`) name an organization, and whether any organization qualifies.
 */
const organizationUsage = z.enum(["deny", "allow", "require"]);

/** POST /api/v2/client-grants. Unknown properties are refused. */
export const createClientGrantBody = z.strictObject({
  client_id: z.string().min(1).max(64),
  audience: z.string().min(1).max(600),
  scope,
  organization_usage: organizationUsage.optional(),
  allow_any_organization: z.boolean().optional(),
});

/** PATCH /api/v2/client-grants/{id}: a scope list replaces the old one; the organization settings are set one by one. */
export const updateClientGrantBody = z
  .strictObject({ scope, organization_usage: organizationUsage.nullable(), allow_any_organization: z.boolean().nullable() })
  .partial()
  .refine((b) => Object.keys(b).length > 0, "give scope, organization_usage or allow_any_organization");

export type ClientGrantPatch = z.infer<typeof updateClientGrantBody>;

/** POST /api/v2/organizations/{id}/client-grants: the grant to associate. */
export const organizationClientGrantBody = z.strictObject({ grant_id: z.string().min(1).max(64) });

export interface ClientGrantRecord {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
  /** Unset (null) until a caller sets it; the reference platform then treats it as `deny`. */
  organization_usage: "deny" | "allow" | "require" | null;
  allow_any_organization: boolean | null;
  created_at: string;
  updated_at: string;
}

/** A client grant as the worker prepared it (id generated). */
export interface NewClientGrant {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
  organization_usage?: "deny" | "allow" | "require";
  allow_any_organization?: boolean;
}
/**
 * A user's consent (issue 29 point 2; the reference platform's `/api/v2/grants`): the scopes a user granted
 * one client for one audience. Written only by the consent page; the management API lists and deletes.
 */
export interface UserGrantRecord {
  id: string;
  user_id: string;
  client_id: string;
  audience: string;
  scope: string[];
  /** ISO 8601. */
  created_at: string;
  updated_at: string;
}

/** What a consent adds: the scopes join the row of (user, client, audience), made when missing. */
export type NewUserGrant = Pick<UserGrantRecord, "id" | "user_id" | "client_id" | "audience" | "scope">;
