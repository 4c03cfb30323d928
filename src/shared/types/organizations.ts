/** Organizations, members and invitations (SPEC §2.6, §2.7) as they cross RPC. */
import type { Json } from "./json";

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

/** The organization a login runs in, as /authorize and the token grants need it. */
export interface LoginOrganization {
  id: string;
  name: string;
  display_name?: string;
  branding?: OrganizationBranding;
  connections: Array<OrganizationConnectionSettings & { connection_id: string; name: string }>;
}

/** What an invitation lets its invitee do, read at /authorize before any login. */
export interface PendingInvitation {
  ticket_id: string;
  organization_id: string;
  client_id: string;
  invitee_email: string;
  inviter_name: string;
  connection_id: string | null;
  expires_at: string;
  /** Whether the invitee already has an account (the invitation then opens the login page, else sign-up). */
  has_account: boolean;
}
