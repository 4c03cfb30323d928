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
