/** Write DTOs and list windows for the management API. */
/**
 * A page request as it crosses RPC (SPEC §4.3): an offset window, or the keyset position after which a
 * checkpoint page starts (newest first: created_at, then id, descending).
 */
export type ListWindow =
  | { offset: number; limit: number }
  | { after: { createdAt: number; id: string } | null; limit: number };

/** One page of records; `total` only for offset windows. */
export interface ListPage<T> {
  items: T[];
  total: number | null;
}

// Each resource's write DTOs live with its schema and record (issue 26 point 4); re-exported for callers.
export type { BrandingPatch } from "../schemas/branding";
export type { NewClientGrant } from "../schemas/client-grants";
export type { ClientPatch, NewClient } from "../schemas/clients";
export type { ConnectionPatch, NewConnection } from "../schemas/connections";
export type { NewResourceServer, ResourceServerPatch } from "../schemas/resource-servers";
