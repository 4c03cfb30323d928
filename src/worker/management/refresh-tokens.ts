import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../../shared/crypto/encoding";
import { problem } from "../../shared/errors";
import type { RefreshTokenRecord } from "../../shared/types";
import type { AppContext } from "../context";
import { userObject } from "../tenant/stubs";
import { defineRoute } from "./define";
import { LIST_QUERY, listResponse } from "./list-response";
import { targetTenant } from "./tenant-scoped";

/**
 * Management ids of refresh tokens carry their route like the tokens do (ARCHITECTURE.md §5):
 * `<token id>.<base64url(user_id)>`, so `GET /refresh-tokens/{id}` reaches the user's object without a
 * tenant-wide index (no tenant write per rotation).
 */
const managementId = (t: RefreshTokenRecord) => `${t.id}.${toBase64Url(utf8(t.user_id))}`;

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
 * (SPEC §2.8); `revoked_at` only after a soft revoke.
 */
function present(t: RefreshTokenRecord) {
  return {
    id: managementId(t),
    user_id: t.user_id,
    client_id: t.client_id,
    session_id: t.session_id,
    created_at: t.created_at,
    expires_at: t.expires_at,
    idle_expires_at: t.idle_expires_at,
    last_exchanged_at: t.last_exchanged_at,
    device: t.device,
    rotating: true,
    resource_servers: t.audience ? [{ audience: t.audience, scopes: t.scope }] : [],
    ...(t.revoked_at ? { revoked_at: t.revoked_at } : {}),
  };
}

async function existingUser(c: AppContext, id: string) {
  if (!(await targetTenant(c).users().get(id))) throw problem("inexistent_user");
  return userObject(c.env, c.var.tenant.id, id).refreshTokens();
}

async function locate(c: AppContext, id: string) {
  const parsed = parseManagementId(id);
  if (!parsed) throw problem("inexistent_refresh_token");
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
      return c.json(present(token));
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

export const refreshTokenRoutes = [
  defineRoute({
    method: "get",
    path: "/users/{id}/refresh-tokens",
    scope: "read:refresh_tokens",
    summary: "A user's refresh tokens, newest first (checkpoint {tokens, next} or offset)",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const stub = await existingUser(c, params.id ?? "");
      return listResponse(c, "tokens", (window) => stub.list(window), (t) => t.id, present);
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
  deleteOne("/refresh-tokens/{id}"),
  // SPEC §4.2: the underscore spelling is an alias.
  getOne("/refresh_tokens/{id}"),
  deleteOne("/refresh_tokens/{id}"),
];
