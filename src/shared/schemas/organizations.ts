import { z } from "zod";
import { isEmailAddress } from "../email-address";
import type { LuceneSqlConfig } from "../lucene";
import type { Json } from "../types/json";

/**
 * Organizations (SPEC §2.6, §2.7, §4.2 "Organizations"), in the reference platform's request shapes
 * (CreateOrganizationRequestContent, CreateOrganizationInvitationRequestContent ...). Unknown properties
 * are refused.
 */

/** The reference platform's name rule: 1-50 lowercase letters, digits, `_` and `-` (URL-safe). */
export const organizationName = z
  .string()
  .min(1, "name must be 1-50 characters")
  .max(50, "name must be 1-50 characters")
  .regex(/^[a-z0-9_-]+$/, "name may contain only lowercase letters, digits, '_' and '-'");

/** At most this many metadata properties, each value at most 255 characters (reference platform limits). */
export const MAX_ORGANIZATION_METADATA_KEYS = 25;

/** At most this many connections in a create body (the reference platform's limit). */
export const MAX_CREATE_CONNECTIONS = 10;

const displayName = z.string().trim().min(1).max(255);
const webUrl = z.url({ protocol: /^https?$/, message: "logo_url must be an http or https URL" }).max(2048);
const colour = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "colours must be #rgb or #rrggbb");

/** Login-page branding of the organization; it overrides the tenant's on its logins. */
export const organizationBranding = z.strictObject({
  logo_url: webUrl.optional(),
  colors: z.strictObject({ primary: colour, page_background: colour }).optional(),
});

const metadataKey = z.string().min(1).max(255);
const metadata = <T extends z.ZodType<string | null>>(values: T) =>
  z
    .record(metadataKey, values)
    .refine((m) => Object.keys(m).length <= MAX_ORGANIZATION_METADATA_KEYS, `metadata allows at most ${MAX_ORGANIZATION_METADATA_KEYS} properties`);

const quotaLimit = z.int().min(1).max(1_073_741_824);
/** Client-credentials token quota of the organization (stored and returned; not enforced by this server). */
const tokenQuota = z.strictObject({
  client_credentials: z.strictObject({ enforce: z.boolean().optional(), per_day: quotaLimit.optional(), per_hour: quotaLimit.optional() }),
});

/** The per-connection settings of an organization (POST / PATCH .../enabled_connections). */
const connectionSettings = {
  assign_membership_on_login: z.boolean(),
  show_as_button: z.boolean(),
  is_signup_enabled: z.boolean(),
};

/** POST /organizations/{id}/enabled_connections. */
export const addOrganizationConnectionBody = z.strictObject({
  connection_id: z.string().min(1).max(64),
  ...z.object(connectionSettings).partial().shape,
});

/** PATCH /organizations/{id}/enabled_connections/{connection_id}. */
export const updateOrganizationConnectionBody = z.strictObject(connectionSettings).partial();

/**
 * Fields an organization read shows that no write sets (issue 28 point 6): accepted and ignored, so what
 * auth0-deploy-cli exported (it keeps them) can be sent back unchanged.
 */
const readOnly = {
  created_at: z.string().max(64).optional(),
  updated_at: z.string().max(64).optional(),
};

/** POST /organizations. */
export const createOrganizationBody = z.strictObject({
  ...readOnly,
  name: organizationName,
  display_name: displayName.optional(),
  branding: organizationBranding.optional(),
  metadata: metadata(z.string().max(255)).optional(),
  token_quota: tokenQuota.optional(),
  enabled_connections: z.array(addOrganizationConnectionBody).max(MAX_CREATE_CONNECTIONS).optional(),
});

/** PATCH /organizations/{id}: fields replaced; metadata merged key by key (a null value removes the key). */
export const updateOrganizationBody = z.strictObject({
  ...readOnly,
  name: organizationName.optional(),
  display_name: displayName.nullable().optional(),
  branding: organizationBranding.nullable().optional(),
  metadata: metadata(z.string().max(255).nullable()).optional(),
  token_quota: tokenQuota.nullable().optional(),
});

const userIds = (what: string) => z.array(z.string().min(1).max(300)).min(1, `${what} must name at least one user`).max(100);

/** POST and DELETE /organizations/{id}/members. */
export const organizationMembersBody = z.strictObject({ members: userIds("members") });

/** POST and DELETE /organizations/{id}/members/{user_id}/roles. */
export const organizationMemberRolesBody = z.strictObject({
  roles: z.array(z.string().min(1).max(64)).min(1, "roles must name at least one role").max(50),
});

/** Invitation lifetime (SPEC §2.7, §8): 0 or absent means the default. */
export const DEFAULT_INVITATION_TTL_S = 604_800;
export const MAX_INVITATION_TTL_S = 2_592_000;

/** A required field whose absence the message names (issue 11: "400 naming the missing field"). */
const required = <T extends z.ZodType>(field: string, schema: T) =>
  z.unknown().superRefine((value, ctx) => {
    if (value === undefined || value === null) ctx.addIssue({ code: "custom", message: `Missing required property: ${field}` });
  }).pipe(schema);

/** POST /organizations/{id}/invitations (SPEC §2.7). */
export const createInvitationBody = z.strictObject({
  inviter: required("inviter", z.strictObject({ name: required("inviter.name", z.string().trim().min(1).max(300)) })),
  invitee: required("invitee", z.strictObject({ email: required("invitee.email", z.string().trim().max(320).refine(isEmailAddress, "invitee.email must be an email address")) })),
  client_id: required("client_id", z.string().min(1).max(64)),
  connection_id: z.string().min(1).max(64).optional(),
  app_metadata: z.record(z.string(), z.json()).optional(),
  user_metadata: z.record(z.string(), z.json()).optional(),
  ttl_sec: z.int("ttl_sec must be an integer").min(0, "ttl_sec must not be negative").max(MAX_INVITATION_TTL_S, `ttl_sec must be at most ${MAX_INVITATION_TTL_S}`).optional(),
  roles: z.array(z.string().min(1).max(64)).max(50).optional(),
  send_invitation_email: z.boolean().optional(),
});

export type CreateOrganizationBody = z.infer<typeof createOrganizationBody>;
export type UpdateOrganizationBody = z.infer<typeof updateOrganizationBody>;
export type CreateInvitationBody = z.infer<typeof createInvitationBody>;

/**
 * The `q` language of GET /organizations (the shared Lucene compiler): `id`, `name`, `display_name`,
 * `created_at` ranges and `metadata.<key>`; a bare term searches name and display_name as a substring.
 */
export const ORGANIZATIONS_SEARCH: LuceneSqlConfig = {
  fields: {
    id: { kind: "exact", column: "id" },
    name: { kind: "text", column: "name" },
    display_name: { kind: "text", column: "display_name" },
    created_at: { kind: "date", column: "created_at" },
    metadata: { kind: "json", column: "metadata" },
  },
  bareFields: ["name", "display_name"],
  emailField: "name",
};

/** Sorts of GET /organizations (offset mode): `field:1|-1`, `asc`/`desc` accepted as aliases. */
export const ORGANIZATION_SORTS: Record<string, { column: "name" | "display_name" | "created_at"; descending: boolean }> = {};
for (const column of ["name", "display_name", "created_at"] as const) {
  for (const [suffix, descending] of [["1", false], ["asc", false], ["-1", true], ["desc", true]] as const) {
    ORGANIZATION_SORTS[`${column}:${suffix}`] = { column, descending };
  }
}

export interface OrganizationBranding {
  logo_url?: string;
  colors?: { primary: string; page_background: string };
}

/** An organization as the API shows it. */
export interface OrganizationRecord {
  id: string;
  name: string;
  display_name?: string;
  branding?: OrganizationBranding;
  metadata: Record<string, string>;
  token_quota?: Record<string, Json>;
  created_at: string;
  updated_at: string;
}

/** The per-connection settings of an organization. */
export interface OrganizationConnectionSettings {
  assign_membership_on_login: boolean;
  show_as_button: boolean;
  is_signup_enabled: boolean;
}

/** One enabled connection of an organization, with the connection's name and strategy. */
export interface OrganizationConnectionRecord extends OrganizationConnectionSettings {
  connection_id: string;
  connection: { name: string; strategy: string };
  created_at: string;
}

export interface NewOrganization {
  id: string;
  name: string;
  display_name?: string;
  branding?: OrganizationBranding;
  metadata: Record<string, string>;
  token_quota?: Record<string, Json>;
  enabled_connections: Array<{ connection_id: string } & Partial<OrganizationConnectionSettings>>;
}

/** PATCH /organizations/{id}: fields replaced (null clears), metadata merged (a null value removes a key). */
export interface OrganizationPatch {
  name?: string;
  display_name?: string | null;
  branding?: OrganizationBranding | null;
  metadata?: Record<string, string | null>;
  token_quota?: Record<string, Json> | null;
}

/** A member as GET /organizations/{id}/members lists it (the user's current profile). */
export interface OrganizationMemberRecord {
  user_id: string;
  email: string | null;
  name: string | null;
  picture: string | null;
  /** When the membership was created (the list's order). */
  created_at: string;
}

export interface OrganizationRoleRecord {
  id: string;
  name: string;
  description: string | null;
}

/** An invitation (SPEC §2.7) as the API shows it. */
export interface InvitationRecord {
  id: string;
  organization_id: string;
  inviter: { name: string };
  invitee: { email: string };
  invitation_url: string;
  ticket_id: string;
  client_id: string;
  connection_id?: string;
  app_metadata?: Record<string, Json>;
  user_metadata?: Record<string, Json>;
  roles: string[];
  created_at: string;
  expires_at: string;
}

/** An invitation as the worker prepared it (ids, ticket and URL made, expiry computed in ms). */
export interface NewInvitation {
  id: string;
  organization_id: string;
  ticket_id: string;
  inviter_name: string;
  invitee_email: string;
  client_id: string;
  connection_id: string | null;
  app_metadata: Record<string, Json> | null;
  user_metadata: Record<string, Json> | null;
  roles: string[];
  invitation_url: string;
  ttl_ms: number;
}
