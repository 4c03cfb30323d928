import { fromBase64Url, fromUtf8 } from "../../../shared/crypto/encoding";
import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { CLIENT_TOKENS_REVOKED_BEFORE, clientTokensRevokedBefore } from "../../../shared/schemas/clients";
import { refreshTokenEvent, revokeRefreshTokensBody, updateRefreshTokenBody } from "../../../shared/schemas/refresh-tokens";
import type { RefreshTokenRecord } from "../../../shared/types";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { configOf } from "../../login/connection";
import { userObject } from "../../tenant/stubs";
import { defineRoute } from "../define";
import { LIST_QUERY, listResponse, projection } from "../list-response";
import { targetTenant } from "../tenant-scoped";

/**
 * Management ids of refresh tokens carry their route like the tokens do (ARCHITECTURE.md §5):
 * `<token id>.<base64url(user_id)>`, so `GET /refresh-tokens/{id}` reaches the user's object without a
 * tenant-wide index (no tenant write per rotation). `refreshTokenApiId` (shared/schemas/refresh-tokens.ts) makes them; this reads them back.
 */
function parseManagementId(id: string): { tokenId: string; userId: string } | null {
  const match = /^(rt_[A-Za-z0-9]{22})\.([A-Za-z0-9_-]{1,400})$/.exec(id);
  if (!match) return null;
  try {
    return { tokenId: match[1] as string, userId: fromUtf8(fromBase64Url(match[2] as string)) };
  } catch {
    return null;
  }
}

/**
 * The reference platform's shape. Never token_lookup, token_hash, family_id, rotated_to or rotated_at
 * (SPEC §2.8); `revoked_at` only after a soft revoke. `refresh_token_metadata` is always present, `{}` when
 * unset, as the reference platform's response examples show it.
 */
function present(t: RefreshTokenRecord, revokedBefore: ReadonlyMap<string, number> = new Map()) {
  // A client-wide revocation reaches each family at its next use; until then the family reads as revoked then.
  const clientWide = revokedBefore.get(t.client_id);
  const revokedAt = t.revoked_at ?? (clientWide !== undefined && Date.parse(t.created_at) < clientWide ? new Date(clientWide).toISOString() : null);
  // The action event's fields, with the metadata under the management API's name.
  const { metadata, ...fields } = refreshTokenEvent(t);
  return { ...fields, refresh_token_metadata: metadata, ...(revokedAt ? { revoked_at: revokedAt } : {}) };
}

/** The tenant's client-wide refresh-token revocations (client id -> time), for `present`. */
async function clientRevocations(c: AppContext): Promise<Map<string, number>> {
  const revoked = new Map<string, number>();
  for (const client of (await configOf(c)).clients) {
    const at = clientTokensRevokedBefore(client);
    if (at !== null) revoked.set(client.client_id, at);
  }
  return revoked;
}

async function existingUser(c: AppContext, id: string) {
  if (!(await targetTenant(c).users().get(id))) throw problem("inexistent_user");
  return userObject(c.env, c.var.tenant.id, id).refreshTokens();
}

/** The token's user object; an id naming no account of the tenant is 404 before any object is touched. */
async function locate(c: AppContext, id: string) {
  const parsed = parseManagementId(id);
  if (!parsed || !(await targetTenant(c).users().exists(parsed.userId))) throw problem("inexistent_refresh_token");
  return { ...parsed, stub: userObject(c.env, c.var.tenant.id, parsed.userId).refreshTokens() };
}

type OnePath = "/refresh-tokens/{id}" | "/refresh_tokens/{id}";

const getOne = (path: OnePath) =>
  defineRoute({
    method: "get",
    path,
    scope: "read:refresh_tokens",
    summary: "One refresh token (never its hash or rotation links)",
    status: 200,
    async handler(c, { params }) {
      const { tokenId, stub } = await locate(c, params.id ?? "");
      const token = await stub.get(tokenId);
      if (!token) throw problem("inexistent_refresh_token");
      return c.json(present(token, await clientRevocations(c)));
    },
  });

const deleteOne = (path: OnePath) =>
  defineRoute({
    method: "delete",
    path,
    scope: "delete:refresh_tokens",
    summary: "Revoke the rest of the token's rotation family, then delete the token (SPEC §3.3)",
    status: 200,
    async handler(c, { params }) {
      const { tokenId, stub } = await locate(c, params.id ?? "");
      if (!(await stub.delete(tokenId))) throw problem("inexistent_refresh_token");
      return c.json({});
    },
  });

const patchOne = (path: OnePath) =>
  defineRoute({
    method: "patch",
    path,
    scope: "update:refresh_tokens",
    summary: "Replace the token's refresh_token_metadata (null or {} clears it); the family keeps it across rotations",
    body: updateRefreshTokenBody,
    status: 200,
    async handler(c, { params, body }) {
      const { tokenId, stub } = await locate(c, params.id ?? "");
      const token = await stub.setMetadata(tokenId, body.refresh_token_metadata ?? {});
      if (!token) throw problem("inexistent_refresh_token");
      return c.json(present(token, await clientRevocations(c)));
    },
  });

/** GET /refresh-tokens: the user is named by the query, not the path; checkpoint paging only. */
const TOKENS_QUERY = z.looseObject({
  user_id: z.string({ error: "user_id is required" }).min(1, "user_id is required").describe("the user whose tokens to list (required)"),
  client_id: z.string().optional().describe("only the tokens of this application"),
  from: LIST_QUERY.shape.from,
  take: LIST_QUERY.shape.take,
  fields: z.string().optional().describe("comma-separated fields to include (or exclude with include_fields=false)"),
  include_fields: z.string().optional().describe("true (default) or false"),
});

/**
 * POST /refresh-tokens/revoke with `ids`: grouped by the user each id routes to, one transaction per user.
 * Ids that name no token (malformed, unknown, another tenant's user) are passed over, as the reference
 * platform accepts the request without reporting them.
 */
async function revokeByIds(c: AppContext, ids: readonly string[]): Promise<void> {
  const byUser = new Map<string, string[]>();
  for (const id of ids) {
    const parsed = parseManagementId(id);
    if (parsed) byUser.set(parsed.userId, [...(byUser.get(parsed.userId) ?? []), parsed.tokenId]);
  }
  // Only accounts of this tenant: an id naming anyone else makes no user object.
  const known = new Set(await targetTenant(c).users().existing([...byUser.keys()]));
  const targets = [...byUser].filter(([userId]) => known.has(userId));
  await Promise.all(targets.map(([userId, tokenIds]) => userObject(c.env, c.var.tenant.id, userId).refreshTokens().revokeFamilies(tokenIds)));
}

/**
 * `client_id` alone: every user's tokens of the application. Tokens live in each user's object with no
 * tenant-wide index, so the revocation is recorded once on the client (one commit, audited as a client
 * update) and each family meets it at its next use, where the user object revokes it (exact: a family that
 * started before is refused, whatever it rotated to since); reads list such tokens as revoked at that time.
 * An unknown client holds nothing to revoke.
 */
async function revokeAllOfClient(c: AppContext, clientId: string): Promise<void> {
  const tenant = targetTenant(c);
  if (!(await tenant.clients().get(clientId))) return;
  unwrap(await tenant.clients(auditContext(c)).update(clientId, { extra: { [CLIENT_TOKENS_REVOKED_BEFORE]: Date.now() } }));
}

export const refreshTokenRoutes = [
  defineRoute({
    method: "get",
    path: "/refresh-tokens",
    scope: "read:refresh_tokens",
    summary: "A user's refresh tokens (user_id required, client_id narrows), newest first: checkpoint {refresh_tokens, next}",
    query: TOKENS_QUERY,
    status: 200,
    async handler(c, { query }) {
      const select = projection(c);
      const revoked = await clientRevocations(c);
      const stub = await existingUser(c, query.user_id);
      const filter = query.client_id ? { client_id: query.client_id } : {};
      return listResponse(c, "refresh_tokens", (window) => stub.list(window, filter), (t) => t.id, (t) => select(present(t, revoked)), {
        checkpoint: true,
        checkpointOnly: true,
      });
    },
  }),
  defineRoute({
    method: "post",
    path: "/refresh-tokens/revoke",
    scope: "delete:refresh_tokens",
    summary: "Soft-revoke whole families by ids, user_id, user_id + client_id, user_id + client_id + audience, or client_id alone (202)",
    invalidatesConfig: true,
    body: revokeRefreshTokensBody,
    status: 202,
    async handler(c, { body }) {
      if (body.ids) {
        await revokeByIds(c, body.ids);
      } else if (!body.user_id && body.client_id) {
        await revokeAllOfClient(c, body.client_id);
      } else if (body.user_id && (await targetTenant(c).users().get(body.user_id))) {
        // An unknown user holds no tokens: nothing to revoke, and no user object is created for it.
        const filter = { ...(body.client_id ? { client_id: body.client_id } : {}), ...(body.audience ? { audience: body.audience } : {}) };
        await userObject(c.env, c.var.tenant.id, body.user_id).refreshTokens().revokeMatching(filter);
      }
      return c.body(null, 202);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/refresh-tokens",
    scope: "read:refresh_tokens",
    summary: "A user's refresh tokens, newest first (checkpoint {tokens, next} or offset)",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const stub = await existingUser(c, params.id ?? "");
      const revoked = await clientRevocations(c);
      return listResponse(c, "tokens", (window) => stub.list(window), (t) => t.id, (t) => present(t, revoked));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/refresh-tokens",
    scope: "delete:refresh_tokens",
    summary: "Soft-revoke every refresh token of the user (revoked_at set)",
    status: 204,
    async handler(c, { params }) {
      const stub = await existingUser(c, params.id ?? "");
      await stub.revokeAll();
      return c.body(null, 204);
    },
  }),
  getOne("/refresh-tokens/{id}"),
  patchOne("/refresh-tokens/{id}"),
  deleteOne("/refresh-tokens/{id}"),
  // SPEC §4.2: the underscore spelling is an alias.
  getOne("/refresh_tokens/{id}"),
  patchOne("/refresh_tokens/{id}"),
  deleteOne("/refresh_tokens/{id}"),
];
