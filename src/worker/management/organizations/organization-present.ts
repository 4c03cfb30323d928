import { problem } from "../../../shared/errors";
import { parseListQuery } from "../../../shared/pagination/list-query";
import type { OrganizationConnectionRecord, OrganizationRecord } from "../../../shared/schemas/organizations";
import type { AppContext } from "../../context";

/** An organization in the reference platform's shape (SPEC §2.6). */
export const presentOrganization = (org: OrganizationRecord) => org;

/** An enabled connection in the reference platform's shape (OrganizationConnection). */
export const presentConnection = ({ created_at: _at, ...link }: OrganizationConnectionRecord) => link;

/** Offset-only paging parameters of a sub-list (SPEC §4.3: page 0-based, per_page 1-100, default 50). */
export function offsetQuery(c: AppContext) {
  const q = parseListQuery(c.req.query(), { checkpoint: false });
  if (q.mode !== "offset") throw problem("checkpoint_unsupported");
  return q;
}
