import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { now } from "../../../shared/clock";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { sha256, timingSafeEqualText } from "../../../shared/crypto/compare";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomToken } from "../../../shared/crypto/random";
import { subdomainBase } from "../../routing/resolve-tenant";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { ApiError, Notice, tenantPath } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";
import { cookieAttributes, isHttps } from "../session";
import { type Execution, findExecutions } from "./try-login-executions";

/**
 * "Try login" (issue 30): a built-in test application of the tenant (a public SPA client created through
 * POST /clients on first use) runs the tenant's real login (authorization code + PKCE, its own login page on
 * its own host) and comes back to the console, which redeems the code, verifies the ID token against the
 * tenant's JWKS and shows both tokens decoded (header and payload only: no token string, signed or not,
 * reaches the page), with the actions the login ran (GET /actions/executions/{id}). Nothing is kept.
 */

/** The test application's name and its marker in client_metadata. */
export const TRY_APP_NAME = "Gatehouse console: try login";
const MARKER = { gatehouse_console: "try-login" };
const TX_TTL_MS = 10 * 60_000;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

interface Client {
  client_id: string;
  name: string;
  callbacks?: string[];
  client_metadata?: Record<string, string>;
}
interface Api {
  identifier: string;
  name: string;
  is_system?: boolean;
}
interface TryTransaction {
  state: string;
  verifier: string;
  nonce: string;
  clientId: string;
  startedAt: number;
  exp: number;
}

const tenantOf = (c: ConsoleContext) => c.req.param("tenant") as string;
const base = (tenant: string) => tenantPath(tenant, "/try-login");
/** Where the tenant sends the browser back: the console, on the apex. */
const callbackOf = (c: ConsoleContext, tenant: string) => `${new URL(c.var.settings.issuer).origin}${base(tenant)}/callback`;
const txCookie = (c: ConsoleContext) => (isHttps(c) ? "__Host-gh_console_try" : "gh_console_try");

/**
 * The tenant's issuer as a browser reaches it: the control plane on the apex, any other tenant on its
 * subdomain (of the base domain, else the apex: ARCHITECTURE §5), with the apex's scheme.
 */
export function tenantIssuerOf(c: ConsoleContext, tenant: string): string | null {
  const apex = new URL(c.var.settings.issuer);
  if (tenant === c.var.settings.controlPlaneTenantId) return `${apex.origin}/`;
  // Tenant ids are DNS labels (platform/tenants.ts); anything else never becomes a host to redirect to.
  if (!DNS_LABEL.test(tenant)) return null;
  return `${apex.protocol}//${tenant}.${subdomainBase(c.var.settings)}/`;
}

/** The tenant's test application (marked in its client_metadata, with the console's callback), if any. */
async function testApplication(c: ConsoleContext, tenant: string): Promise<{ client: Client | null; error: string | null; status: number }> {
  const callback = callbackOf(c, tenant);
  for (let page = 0; page < 10; page++) {
    const list = await c.var.api.get<Client[]>(tenant, "/clients", { per_page: 100, page, fields: "client_id,name,callbacks,client_metadata", include_fields: true });
    if (!list.ok) return { client: null, error: list.error, status: list.status };
    const found = list.body.find((x) => x.client_metadata?.gatehouse_console === MARKER.gatehouse_console && x.callbacks?.includes(callback));
    if (found || list.body.length < 100) return { client: found ?? null, error: null, status: 200 };
  }
  return { client: null, error: null, status: 200 };
}

/** GET /admin/t/:tenant/try-login: the test application, or the button that creates it; then the login link. */
export async function tryLoginScreen(c: ConsoleContext, outcome: { notice?: string; error?: string | null; status?: 200 | 201 | 400 | 403 | 404 } = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const [app, apis] = await Promise.all([testApplication(c, tenant), c.var.api.get<Api[]>(tenant, "/resource-servers", { per_page: 50 })]);
  const audiences = apis.ok && Array.isArray(apis.body) ? apis.body.filter((a) => !a.is_system) : [];
  return sendConsolePage(
    c,
    shellOf(c, "Try login", { tenant, section: "try-login" }),
    <>
      <h1>Try login</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? app.error} />
      <p>
        Runs the real login of <strong>{tenant}</strong> at <code>{tenantIssuerOf(c, tenant) ?? ""}</code> with a test application (authorization code with PKCE), then shows the
        ID and access tokens decoded and the actions the login ran. The tokens are not kept.
      </p>
      {app.client ? (
        <div class="card">
          <p>
            Test application: <code>{app.client.client_id}</code>
          </p>
          {/* Links, not a form: the console's CSP allows forms to post to the console only, and the login is on the tenant's host. */}
          <ul>
            <li>
              <a href={`${base(tenant)}/start`}>Log in as a user of this tenant</a> (access token for /userinfo)
            </li>
            {audiences.map((a) => (
              <li>
                <a href={`${base(tenant)}/start?${new URLSearchParams({ audience: a.identifier })}`}>Log in with an access token for {a.name}</a>
              </li>
            ))}
          </ul>
        </div>
      ) : can(c, "create:clients") ? (
        <form method="post" action={base(tenant)} class="card">
          <Csrf token={c.var.operator.csrf} />
          <p>The tenant has no test application yet. It is a single-page application (no secret) whose only callback is this console.</p>
          <button type="submit">Create the test application</button>
        </form>
      ) : (
        <p class="card">The tenant has no test application, and creating one needs the create:clients permission.</p>
      )}
    </>,
    outcome.status ?? (app.error ? statusOf(app.status) : 200),
  );
}

const statusOf = (s: number) => (s === 403 || s === 404 ? s : 400);

/** POST /admin/t/:tenant/try-login: POST /clients for the test application (once). */
export async function createTryApplication(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const existing = await testApplication(c, tenant);
  if (existing.client) return tryLoginScreen(c, { notice: "The test application exists." });
  const body = {
    name: TRY_APP_NAME,
    description: "Created by the Gatehouse console to try the tenant's login; its only callback is the console.",
    app_type: "spa",
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    callbacks: [callbackOf(c, tenant)],
    client_metadata: MARKER,
  };
  const created = await c.var.api.post<Client>(tenant, "/clients", body);
  if (!created.ok) return tryLoginScreen(c, { error: created.error, status: created.status === 403 ? 403 : 400 });
  return tryLoginScreen(c, { notice: "Test application created.", status: 201 });
}

/**
 * GET /admin/t/:tenant/try-login/start: state, PKCE verifier and nonce sealed in a short-lived cookie
 * scoped to the try-login path, then the tenant's /authorize (`prompt=login`: the login runs every time).
 */
export async function startTryLogin(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const app = await testApplication(c, tenant);
  const issuer = tenantIssuerOf(c, tenant);
  if (!app.client || !issuer) return tryLoginScreen(c, { error: app.error ?? "Create the test application first.", status: app.error ? statusOf(app.status) : 400 });
  const tx: TryTransaction = { state: randomToken(24), verifier: randomToken(32), nonce: randomToken(24), clientId: app.client.client_id, startedAt: now(), exp: now() + TX_TTL_MS };
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  setCookie(c, txCookie(c), await cipher.encrypt(JSON.stringify(tx), encryptionContext.consoleTryLogin(tenant)), { ...cookieAttributes(c, base(tenant)), maxAge: TX_TTL_MS / 1_000 });
  const params = new URLSearchParams({
    response_type: "code",
    client_id: tx.clientId,
    redirect_uri: callbackOf(c, tenant),
    scope: "openid profile email",
    state: tx.state,
    nonce: tx.nonce,
    code_challenge: toBase64Url(await sha256(tx.verifier)),
    code_challenge_method: "S256",
    prompt: "login",
  });
  const audience = (c.req.query("audience") ?? "").trim();
  if (audience) params.set("audience", audience);
  // A connection's own "try" (the connection page's link): the tenant's /authorize checks that the test
  // application offers it (its not-found page otherwise).
  const connection = (c.req.query("connection") ?? "").trim();
  if (connection && connection.length <= 128) params.set("connection", connection);
  return c.redirect(`${issuer}authorize?${params}`, 302);
}

async function readTransaction(c: ConsoleContext, tenant: string): Promise<TryTransaction | null> {
  const sealed = getCookie(c, txCookie(c));
  deleteCookie(c, txCookie(c), cookieAttributes(c, base(tenant)));
  if (!sealed) return null;
  try {
    const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
    const tx = JSON.parse(await cipher.decrypt(sealed, encryptionContext.consoleTryLogin(tenant))) as TryTransaction;
    return tx.exp > now() ? tx : null;
  } catch {
    return null;
  }
}

/** A token's header and payload (never the token itself). */
function decoded(token: string): { header: unknown; payload: unknown } {
  return { header: decodeProtectedHeader(token), payload: decodeJwt(token) };
}

/** A decoded token: its header and payload under their own headings. */
function TokenView(props: { title: string; token: { header: unknown; payload: unknown } }) {
  return (
    <>
      <h2>{props.title}</h2>
      <h3>{`${props.title} header`}</h3>
      <pre>{JSON.stringify(props.token.header, null, 2)}</pre>
      <h3>{`${props.title} payload`}</h3>
      <pre>{JSON.stringify(props.token.payload, null, 2)}</pre>
    </>
  );
}

/** Whether the ID token's signature verifies against the tenant's published JWKS, for this client and issuer. */
async function verifyIdToken(c: ConsoleContext, issuer: string, clientId: string, idToken: string, nonce: string): Promise<string> {
  const response = await c.var.dispatch(new Request(`${issuer}.well-known/jwks.json`), c);
  if (!response.ok) return `not verified: the JWKS answered ${response.status}`;
  try {
    const { payload } = await jwtVerify(idToken, createLocalJWKSet((await response.json()) as JSONWebKeySet), { issuer, audience: clientId });
    if (typeof payload.nonce !== "string" || !(await timingSafeEqualText(payload.nonce, nonce))) return "not verified: the nonce is not this login's";
    return "verified (signature, issuer, audience, expiry and nonce)";
  } catch (error) {
    return `not verified: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * GET /admin/t/:tenant/try-login/callback: this browser's state (constant time), the code redeemed at the
 * tenant's token endpoint with the PKCE verifier, the tokens decoded and shown once.
 */
export async function tryLoginCallback(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const tx = await readTransaction(c, tenant);
  const state = c.req.query("state") ?? "";
  if (!tx || !state || !(await timingSafeEqualText(state, tx.state))) {
    return tryLoginScreen(c, { error: "This login has expired or was not started here. Start it again.", status: 400 });
  }
  const refused = c.req.query("error");
  if (refused) return tryLoginScreen(c, { error: `The login was refused: ${c.req.query("error_description") ?? refused}`, status: 400 });
  const issuer = tenantIssuerOf(c, tenant);
  if (!issuer) return tryLoginScreen(c, { error: "Unknown tenant.", status: 400 });
  const form = new URLSearchParams({ grant_type: "authorization_code", code: c.req.query("code") ?? "", redirect_uri: callbackOf(c, tenant), client_id: tx.clientId, code_verifier: tx.verifier });
  const response = await c.var.dispatch(new Request(`${issuer}oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form }), c);
  const tokens = (await response.json().catch(() => ({}))) as { id_token?: string; access_token?: string; expires_in?: number; scope?: string; error_description?: string };
  if (!response.ok || !tokens.id_token) return tryLoginScreen(c, { error: `The token endpoint refused the code: ${tokens.error_description ?? response.status}`, status: 400 });
  const id = decoded(tokens.id_token);
  const access = tokens.access_token?.includes(".") ? decoded(tokens.access_token) : null;
  const verified = await verifyIdToken(c, issuer, tx.clientId, tokens.id_token, tx.nonce);
  const sub = (id.payload as { sub?: string }).sub ?? "";
  const executions = await findExecutions(c, tenant, tx.clientId, sub, tx.startedAt);
  return sendConsolePage(
    c,
    shellOf(c, "Try login: tokens", { tenant, section: "try-login" }),
    <>
      <h1>Try login: the tokens</h1>
      <p class="notice" role="status">
        Logged in as <code>{sub}</code>. ID token {verified}.
      </p>
      <p class="muted">Only the decoded header and payload are shown; the tokens themselves were not kept.</p>
      <TokenView title="ID token" token={id} />
      {access ? <TokenView title="Access token" token={access} /> : <p class="muted">The access token is not a JWT.</p>}
      <p>
        Expires in {tokens.expires_in ?? "?"} s · scope <code>{tokens.scope ?? ""}</code>
      </p>
      <h2>Actions that ran</h2>
      <ApiError message={executions.error} />
      <DataTable<Execution>
        caption="Post-login actions of this login (GET /actions/executions/{id})"
        rows={executions.rows}
        columns={[
          { label: "Action", cell: (r) => r.action_name },
          { label: "Trigger", cell: (r) => r.trigger_id },
          { label: "Outcome", cell: (r) => (r.error ? `Error: ${r.error.msg}` : "Success") },
          { label: "Duration", cell: (r) => `${r.duration_ms} ms` },
          { label: "Console output", cell: (r) => (r.logs ? <code>{r.logs}</code> : "") },
        ]}
        empty="No action ran during this login."
      />
      <p>
        <a href={base(tenant)}>Try again</a>
      </p>
    </>,
  );
}
