import { now } from "../../shared/clock";
import { problem } from "../../shared/errors";
import { ORGANIZATION_TENANT_SCOPES } from "../../shared/scopes";
import type { ManagementStanding } from "../../shared/types";

/**
 * How long one isolate trusts a user's standing behind its management token (issue 25 finding 5): removing
 * the user from its organization, taking its role, blocking or deleting it takes effect on its tokens within
 * this much. Overridden by USER_STANDING_TTL_MS (tests run with 0).
 * @default 5000
 */
export const USER_STANDING_TTL_MS = 5_000;

/** Entries one isolate keeps at most; the oldest goes first (a Map iterates in insertion order). */
const MAX_ENTRIES = 1_000;

const cache = new Map<string, { standing: ManagementStanding; expiresAt: number }>();

/** What identifies a token's user for the cache: its tenant, its id and the organization it logged in through. */
export interface StandingKey {
  tenantId: string;
  userId: string;
  organizationId: string | null;
  /** An operator's console token (issue 30): its standing carries its permissions without an organization. */
  operator?: boolean;
}

/** The user's standing, read through `load` at most once per `ttlMs` per isolate (0: at every request). */
async function standingOf(key: StandingKey, ttlMs: number, load: () => Promise<ManagementStanding>): Promise<ManagementStanding> {
  const id = JSON.stringify([key.tenantId, key.userId, key.organizationId, key.operator === true]);
  const at = now();
  const hit = cache.get(id);
  if (hit && hit.expiresAt > at) return hit.standing;
  const standing = await load();
  if (ttlMs > 0) {
    cache.delete(id);
    cache.set(id, { standing, expiresAt: at + ttlMs });
    if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  }
  return standing;
}

/**
 * The scopes a user-shaped management token may use now (issue 25 finding 5): a token whose user is gone or
 * blocked is refused (403 `invalid_token`), whatever it carries; an organization-bound token keeps its
 * tenants scopes only while the user is still a member holding each as a permission there (the others are
 * dropped, so the route answers 403 `insufficient_scope`). Current-user scopes stay with an active user.
 */
export async function standingScopes(
  key: StandingKey,
  scopes: readonly string[],
  ttlMs: number,
  load: () => Promise<ManagementStanding>,
): Promise<string[]> {
  const standing = await standingOf(key, ttlMs, load);
  if (standing.user !== "active") throw problem("token_user_unavailable");
  return scopes.filter((s) => !ORGANIZATION_TENANT_SCOPES.includes(s) || (standing.member && standing.permissions.includes(s)));
}

/**
 * The scopes an operator's console token may use now (issue 30): those it carries that are still the user's
 * permissions on the control plane's management API (a role taken away takes its scopes at once, within
 * the standing cache's few seconds); a user gone or blocked is refused, as for every user token.
 */
export async function operatorScopes(
  key: StandingKey,
  scopes: readonly string[],
  ttlMs: number,
  load: () => Promise<ManagementStanding>,
): Promise<string[]> {
  const standing = await standingOf(key, ttlMs, load);
  if (standing.user !== "active") throw problem("token_user_unavailable");
  return scopes.filter((s) => standing.permissions.includes(s));
}
