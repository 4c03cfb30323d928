import type { JSONWebKeySet } from "jose";
import * as oidc from "openid-client";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH, type CallbackServer } from "./browser";
import { domainFetch } from "./domain-fetch";

/** Who logs in on which custom domain, through which web application (authorization code, client secret). */
export interface DomainLogin {
  domain: string;
  /** The port `wrangler dev` listens on (the domain is reached at `http://<domain>:<port>`). */
  port: number;
  clientId: string;
  clientSecret: string;
  callbacks: CallbackServer;
  redirectUri: string;
  email: string;
  password: string;
}

/**
 * A password login on a custom domain as an application makes it: openid-client discovers the domain as its
 * own OpenID provider (reached through `domainFetch`), Chromium resolves the domain to 127.0.0.1 (a
 * host-resolver MAP rule; everything else stays refused as in the suite) and logs the user in on the login
 * page, and openid-client redeems the code (PKCE, state, nonce). Returns what the test asserts on: the
 * discovered configuration, where the browser landed and everything it requested, the tokens and the
 * domain's JWKS.
 */
export async function loginOnDomain(login: DomainLogin) {
  const { domain, callbacks } = login;
  const origin = `http://${domain}:${login.port}`;
  const issuer = `${origin}/`;
  const viaDomain = domainFetch(domain);
  const config = await oidc.discovery(new URL(issuer), login.clientId, login.clientSecret, undefined, { execute: [oidc.allowInsecureRequests], [oidc.customFetch]: viaDomain });
  config[oidc.customFetch] = viaDomain;
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: login.redirectUri,
    scope: "openid email",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });

  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS.map((arg) => (arg.startsWith("--host-resolver-rules=") ? arg.replace("=", `=MAP ${domain} 127.0.0.1, `) : arg)),
    timeout: 60_000,
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const requested: string[] = [];
    context.on("request", (r) => requested.push(r.url()));
    await page.goto(url.href);
    const loginUrl = new URL(page.url());
    await page.getByLabel("Email address").fill(login.email);
    await page.getByLabel("Password", { exact: true }).fill(login.password);
    const arrived = callbacks.next("/callback");
    await page.getByRole("button", { name: "Continue" }).click();
    const callbackUrl = await arrived.catch(async (error) => {
      throw new Error(`${error}: the browser is at ${page.url()}: ${(await page.locator("body").textContent())?.slice(0, 400)}; requests: ${requested.join(" ")}`);
    });
    await context.close();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const jwks = (await (await viaDomain(`${origin}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    return { origin, issuer, viaDomain, config, loginUrl, requested, tokens, jwks, nonce };
  } finally {
    await browser.close().catch(() => undefined);
  }
}
