import * as oidc from "openid-client";

/** Who logs in, through which application, and what the authorization request asks for. */
export interface PasswordLogin {
  baseUrl: string;
  clientId: string;
  /** A web origin of the application (the cross-origin login endpoint checks it). */
  origin: string;
  callback: string;
  username: string;
  password: string;
  scope: string;
  audience?: string;
}

/**
 * A real password login: `/co/authenticate` for a login ticket, then openid-client's authorization code flow
 * (PKCE, state) carrying the ticket, and the code exchange. Throws with the server's answer on any refusal.
 */
export async function passwordLogin(config: oidc.Configuration, login: PasswordLogin) {
  const co = await fetch(`${login.baseUrl}/co/authenticate`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: login.origin },
    body: JSON.stringify({ client_id: login.clientId, username: login.username, password: login.password, credential_type: "password" }),
  });
  if (co.status !== 200) throw new Error(`/co/authenticate answered ${co.status}: ${await co.text()}`);
  const { login_ticket } = (await co.json()) as { login_ticket: string };
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: login.callback,
    scope: login.scope,
    ...(login.audience ? { audience: login.audience } : {}),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    login_ticket,
  });
  const res = await fetch(url, { redirect: "manual" });
  if (res.status !== 302) throw new Error(`/authorize answered ${res.status}: ${await res.text()}`);
  return oidc.authorizationCodeGrant(config, new URL(res.headers.get("location") as string), { pkceCodeVerifier: verifier, expectedState: state });
}
