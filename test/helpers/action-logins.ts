import { decodeJwt, type JWTPayload } from "jose";
import { expect } from "vitest";
import { call, createTenant, uniqueId } from "./api";
import { pendingLogin, seedClient, seedUser, type TestClient, tokenForm } from "./flows";

/**
 * What the post-login action tests share (issue 32: actions-login, actions-egress, actions-redirect): a
 * tenant with a client and a password user, a login through the login page, and the code exchange.
 */
export const ACTION_CALLBACK = "https://app.example.com/callback";
export const ACTION_PASSWORD = "correct-horse-9";

export async function actionLoginSetup() {
  const tenant = await createTenant();
  const client = await seedClient(tenant, { callbacks: [ACTION_CALLBACK] });
  const email = `${uniqueId("u")}@example.com`;
  const user = await seedUser(tenant, email, ACTION_PASSWORD);
  return { tenant, host: `${tenant}.localhost:8787`, client, user, email };
}

/** A password login through the login page; answers the login page's redirect (manual). */
export async function passwordLoginOf(tenant: string, client: TestClient, email: string, request: Record<string, string> = {}): Promise<Response> {
  const pending = await pendingLogin(tenant, client.client_id, { redirect_uri: ACTION_CALLBACK, ...request });
  return call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password: ACTION_PASSWORD }).toString(),
  });
}

/** Exchanges the code of a redirect to the callback; the decoded tokens and the granted scope. */
export async function exchangeCode(tenant: string, client: TestClient, res: Response, extra: Record<string, string> = {}): Promise<{ access: JWTPayload; id: JWTPayload; scope: string }> {
  const location = res.headers.get("location") ?? "";
  const code = new URL(location).searchParams.get("code");
  expect(code, location).toBeTruthy();
  const tokens = await tokenForm(
    { grant_type: "authorization_code", code: code ?? "", redirect_uri: ACTION_CALLBACK, client_id: client.client_id, client_secret: client.client_secret, ...extra },
    {},
    `${tenant}.localhost:8787`,
  );
  expect(tokens.status).toBe(200);
  const body = (await tokens.json()) as { access_token: string; id_token: string; scope: string };
  return { access: decodeJwt(body.access_token), id: decodeJwt(body.id_token), scope: body.scope };
}

/** The error a redirect to the callback carries. */
export const redirectError = (res: Response) => {
  const url = new URL(res.headers.get("location") ?? "");
  return { error: url.searchParams.get("error"), description: url.searchParams.get("error_description"), code: url.searchParams.get("code") };
};
