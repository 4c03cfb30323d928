/** Organization facts a login carries (the organization records live in schemas/organizations.ts). */
import type { OrganizationBranding, OrganizationConnectionSettings } from "../schemas/organizations";

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
