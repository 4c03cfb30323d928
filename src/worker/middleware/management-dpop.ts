import type { JWTPayload } from "jose";
import { OAuthError, problem } from "../../shared/errors";
import type { AppContext } from "../context";
import { boundKey } from "../oauth/access-token";
import { dpopHeader, verifyDpopProof } from "../oauth/dpop/proof";
import { tenantConfig } from "../tenant/config-cache";
import { tenantConfigSource } from "../tenant/stubs";

/** The request's URL, as it arrived and with the Host the client addressed (the `htu` a proof may name). */
function requestUrls(c: AppContext): string[] {
  const url = new URL(c.req.url);
  const host = c.req.header("host");
  if (!host || host === url.host) return [url.href];
  const addressed = new URL(url.href);
  addressed.host = host;
  return [url.href, addressed.href];
}

/**
 * The management API's side of DPoP (RFC 9449 §7): a token bound to a key (`cnf.jkt`) is accepted only in the
 * `DPoP` scheme with a proof of that key for this method and URL (`ath` its hash), checked against the replay
 * cache and nonces of the token's tenant; a bearer token presented in the DPoP scheme is refused.
 */
export async function managementDpop(c: AppContext, presented: { scheme: "Bearer" | "DPoP"; token: string }, payload: JWTPayload, tenantId: string): Promise<void> {
  const jkt = boundKey(payload);
  if (jkt === null) {
    if (presented.scheme === "DPoP") throw problem("invalid_token");
    return;
  }
  if (presented.scheme !== "DPoP") throw problem("dpop_bound_token");
  try {
    const proof = dpopHeader(c.req.raw);
    if (proof === null) throw new OAuthError("invalid_dpop_proof", "a DPoP proof is required");
    const config = await tenantConfig(tenantId, tenantConfigSource(c.env, tenantId), c.var.settings);
    const verified = await verifyDpopProof(c, proof, { site: "resource", urls: requestUrls(c), accessToken: presented.token, config, tenantId });
    if (verified.jkt !== jkt) throw new OAuthError("invalid_dpop_proof", "the proof's key is not the one the token is bound to");
  } catch (error) {
    if (error instanceof OAuthError) {
      // The management body, with the proof's challenge (WWW-Authenticate: DPoP, and DPoP-Nonce when one is needed).
      const refusal = problem(error.code === "use_dpop_nonce" ? "use_dpop_nonce" : "invalid_dpop_proof", { detail: error.description });
      for (const [name, value] of Object.entries(error.headers)) refusal.withHeader(name, value);
      if (!error.headers["WWW-Authenticate"]) refusal.withHeader("WWW-Authenticate", `DPoP error="invalid_dpop_proof"`);
      throw refusal;
    }
    throw error;
  }
}
