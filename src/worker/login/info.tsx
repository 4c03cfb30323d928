import { decodeJwt, decodeProtectedHeader } from "jose";
import type { AppContext } from "../context";
import { redeemCode } from "../oauth/tokens/redeem-code";
import { activeSigner } from "../tenant/keys";
import { configOf } from "./connection";
import { InfoPage } from "./pages/info-page";
import type { PageShell } from "./pages/layout";
import { sendMessage, sendPage, shellFor } from "./render";
import { clientIn } from "../tenant/config-cache";

/** Parameters an authorization response adds to the redirect URI (RFC 6749 §4.1.2, §4.1.2.1). */
const RESPONSE_PARAMS = ["code", "state", "error", "error_description", "error_uri", "iss"];

/**
 * The redirect targets this request can stand for: /u2/info on the tenant's issuer origin, bare, and with
 * the query the client put in its redirect_uri (everything but the response parameters), e.g.
 * `/u2/info?client_id=...`. Both are this page's own URL, which /authorize always accepts (SPEC §5.9).
 */
export function infoRedirectTargets(issuer: string, query: URLSearchParams): string[] {
  const base = `${new URL(issuer).origin}/u2/info`;
  const rest = new URLSearchParams([...query].filter(([key]) => !RESPONSE_PARAMS.includes(key)));
  const restText = rest.toString();
  return restText ? [base, `${base}?${restText}`] : [base];
}

const fail = (c: AppContext, shell: PageShell, message: string, code = "INVALID_CODE") =>
  sendMessage(c, shell, { code, title: "Test login failed", message }, 400);

/**
 * GET /u2/info?code=...&client_id=... (SPEC §4.1): the test-login landing page. Redeems the code server-side
 * for this page's own URL only, through the same conditional consume as /oauth/token: a code issued for any
 * other redirect target is refused and stays redeemable by its rightful client. Then shows the decoded ID
 * token claims and token details (never the raw tokens).
 */
export async function infoPage(c: AppContext): Promise<Response> {
  const config = await configOf(c);
  const shell = shellFor(c, config);
  const query = new URL(c.req.url).searchParams;
  const error = query.get("error");
  if (error) {
    const description = query.get("error_description") ?? "the authorization request failed";
    return fail(c, shell, `${error}: ${description}`, "AUTHORIZATION_ERROR");
  }
  const code = query.get("code");
  const clientId = query.get("client_id");
  if (!code || !clientId) return fail(c, shell, "The test login needs a code and a client_id.", "INVALID_REQUEST");
  const client = clientIn(config, clientId);
  if (!client) return fail(c, shell, "Unknown application.", "INVALID_REQUEST");

  const redeemed = await redeemCode(c, {
    config,
    signer: (alg) => activeSigner(c.env, c.var.settings, c.var.tenant.id, alg),
    client,
    code,
    redirectUris: infoRedirectTargets(c.var.tenant.issuer, query),
    verifier: null,
  });
  if (!redeemed.ok && (redeemed.reason === "user_unavailable" || redeemed.reason === "user_blocked")) {
    return fail(c, shell, "The user is blocked or no longer exists.");
  }
  if (!redeemed.ok) return fail(c, shell, "This code was not issued for the test login page, has expired or was already used.");
  const tokens = redeemed.tokens;
  const brandedShell = shellFor(c, config, client.name);
  return sendPage(
    c,
    brandedShell,
    <InfoPage
      shell={brandedShell}
      clientName={client.name}
      idTokenClaims={tokens.id_token ? decodeJwt(tokens.id_token) : null}
      token={{ token_type: tokens.token_type, expires_in: tokens.expires_in, scope: tokens.scope }}
      accessTokenHeader={tokens.access_token ? decodeProtectedHeader(tokens.access_token) : null}
      accessTokenClaims={tokens.access_token ? decodeJwt(tokens.access_token) : null}
    />,
  );
}

/** GET /u2/logged-out: where logout lands without a returnTo. */
export async function loggedOutPage(c: AppContext): Promise<Response> {
  const shell = shellFor(c, await configOf(c));
  const t = (id: "title" | "description") => shell.text.t("logout", "logout-complete", id);
  return sendMessage(c, shell, { title: t("title"), message: t("description") }, 200);
}
