/** Durable Object names shared by the worker and the objects that reach one another. */

/** One user's object inside a tenant (ARCHITECTURE.md §2): refresh-token families and the login throttle. */
export const userObjectName = (tenantId: string, userId: string) => `${tenantId}/${userId}`;
