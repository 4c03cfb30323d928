import { OAuthError } from "../../shared/errors";
import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";
import { presentedAccessToken, revokedAccessToken, verifyAccessToken } from "./access-token";
import { profileClaims, userinfoAudience } from "./tokens/user-tokens";

/** GET/POST /userinfo (OIDC Core §5.3): claims of the token's user for the token's scopes. */
export async function userinfoEndpoint(c: AppContext): Promise<Response> {
  // RFC 9449 §7: a DPoP-bound token comes with `Authorization: DPoP` and a proof for this request.
  const presented = await presentedAccessToken(c);
  // Revocation is checked below, in the same round trip as the user's read (issue 31).
  const payload = await verifyAccessToken(c, presented, userinfoAudience(c.var.tenant), "userinfo", { revocation: false });
  const { revoked, user } = await tenantObject(c.env, c.var.tenant.id).userinfoRead(typeof payload.jti === "string" ? payload.jti : null, String(payload.sub));
  if (revoked) throw revokedAccessToken(presented);
  const scopes = typeof payload.scope === "string" ? payload.scope.split(" ") : [];
  if (!scopes.includes("openid")) {
    throw new OAuthError("invalid_token", "The access token lacks the openid scope", 403).withHeader(
      "WWW-Authenticate",
      'Bearer error="insufficient_scope", scope="openid"',
    );
  }
  if (!user || user.blocked) throw new OAuthError("invalid_token", "The user no longer exists or is blocked", 401);
  // Computed `sub` is written last: profile data can never override it.
  return c.json({ ...profileClaims(user, scopes), sub: user.user_id }, 200, { "Cache-Control": "no-store" });
}
