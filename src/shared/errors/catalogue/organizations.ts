import type { ErrorEntry } from "../classes";

/** Failures of organizations (a part of the one catalogue, errors/index.ts). */
export const ORGANIZATION_ERRORS = {
  // Organizations (SPEC §2.6, §2.7, §4.2 "Organizations").
  inexistent_organization: { status: 404, message: "No organization found by that id or name", errorCode: "inexistent_organization" },
  organization_conflict: { status: 409, message: 'An organization with name "{name}" already exists', errorCode: "organization_conflict" },
  organization_connection_conflict: {
    status: 409,
    message: "The connection is already enabled for this organization",
    errorCode: "organization_connection_conflict",
  },
  // /organizations/{id}/client-grants (issue 28 point 2).
  client_grant_organization_usage: {
    status: 400,
    message: "The client grant's organization_usage must be allow or require to associate it with an organization",
    errorCode: "invalid_body",
  },
  organization_client_grant_conflict: { status: 409, message: "The client grant is already associated with this organization", errorCode: "conflict" },
  inexistent_organization_client_grant: {
    status: 404,
    message: "The client grant is not associated with this organization",
    errorCode: "inexistent_organization_client_grant",
  },
  inexistent_organization_connection: {
    status: 404,
    message: "The connection is not enabled for this organization",
    errorCode: "inexistent_organization_connection",
  },
  inexistent_organization_member: {
    status: 404,
    message: "The user is not a member of the organization",
    errorCode: "inexistent_organization_member",
  },
  inexistent_invitation: { status: 404, message: "The invitation does not exist", errorCode: "inexistent_invitation" },
  invitation_email_unavailable: {
    status: 400,
    message: "Invitations need an email provider: set EMAIL_PROVIDER, or send_invitation_email false",
    errorCode: "invalid_body",
  },
} as const satisfies Record<string, ErrorEntry>;
