import type { OrganizationConnectionRecord, OrganizationRecord } from "../../../shared/schemas/organizations";

/** An organization in the reference platform's shape (SPEC §2.6). */
export const presentOrganization = (org: OrganizationRecord) => org;

/** An enabled connection in the reference platform's shape (OrganizationConnection). */
export const presentConnection = ({ created_at: _at, ...link }: OrganizationConnectionRecord) => link;
