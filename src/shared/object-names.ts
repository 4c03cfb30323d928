/** Durable Object names shared by the worker and the objects that reach one another. */

/** One user's object inside a tenant (ARCHITECTURE.md §2): refresh-token families and the login throttle. */
export const userObjectName = (tenantId: string, userId: string) => `${tenantId}/${userId}`;

/** How many code shards each tenant has (issue 31): a code's id chooses one, so its replays meet it there. */
export const CODE_SHARDS = 4;

/**
 * The code shard that serializes a sealed authorization code's single use (src/objects/codes/code-object.ts),
 * chosen by the code's id (base64url: its first character spreads the codes evenly over the shards).
 */
export const codeShardName = (tenantId: string, codeId: string) => codeShardNameAt(tenantId, (codeId.charCodeAt(0) || 0) % CODE_SHARDS);

/** The name of a tenant's code shard `n` (0 ≤ n < {@link CODE_SHARDS}). */
export const codeShardNameAt = (tenantId: string, n: number) => `${tenantId}/codes-${n}`;
