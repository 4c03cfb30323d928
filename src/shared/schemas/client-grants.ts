import { z } from "zod";
import { scopeValue } from "./resource-servers";

const scope = z.array(scopeValue).max(1000);

/** POST /api/v2/client-grants. Unknown properties are refused. */
export const createClientGrantBody = z.strictObject({
  client_id: z.string().min(1).max(64),
  audience: z.string().min(1).max(600),
  scope,
});

/** PATCH /api/v2/client-grants/{id}: the scope list replaces the old one. */
export const updateClientGrantBody = z.strictObject({ scope });

export interface ClientGrantRecord {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
  created_at: string;
  updated_at: string;
}

/** A client grant as the worker prepared it (id generated). */
export interface NewClientGrant {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
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
