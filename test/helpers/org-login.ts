import { decodeJwt, type JWTPayload } from "jose";
import { expect } from "vitest";
import { call } from "./api";
import { authorize, redirectParams, seedClient, type TestClient, tokenForm } from "./flows";
import { onTenant } from "./organizations";

export const CALLBACK = "https://app.example.com/callback";
export const PASSWORD = "p4ssw0rd!";
export const hostOf = (tenantId: string) => `${tenantId}.localhost:8787`;

/** A regular web app of the tenant that allows (or requires) organizations. */
export async function orgClient(tenantId: string, settings: Record<string, unknown> = { organization_usage: "allow" }): Promise<TestClient> {
  const client = await seedClient(tenantId, { callbacks: [CALLBACK], grant_types: ["authorization_code", "refresh_token"] });
  await onTenant(tenantId).json("PATCH", `/clients/${client.client_id}`, settings);
  return client;
}

/** A login page as the browser sees it: its HTML, CSRF field and cookie, and its `state`. */
export interface OpenedPage {
  status: number;
  html: string;
  csrf: string;
  cookie: string;
  path: string;
}

/** GETs a /u2 page (a relative Location) and reads its CSRF token and cookie. */
export async function openPage(host: string, location: string): Promise<OpenedPage> {
  const res = await call(location, { host, redirect: "manual" });
  const html = await res.text();
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("gh_csrf="))?.split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  return { status: res.status, html, csrf, cookie, path: location };
}

/** POSTs a form to a /u2 page with its CSRF token and cookie. */
export function submit(host: string, page: OpenedPage, fields: Record<string, string>, path = page.path) {
  return call(path, {
    method: "POST",
    host,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: page.cookie },
    body: new URLSearchParams({ _csrf: page.csrf, ...fields }).toString(),
  });
}

/** /authorize for the client (code flow) with extra parameters; does not follow the redirect. */
export function startLogin(host: string, client: TestClient, params: Record<string, string> = {}, cookie?: string) {
  return authorize(
    { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid profile email offline_access", state: "st", nonce: "n", ...params },
    { host, ...(cookie ? { cookie } : {}) },
  );
}

/** The relative Location of a redirect to a /u2 page. */
export function pageLocation(res: Response): string {
  const location = res.headers.get("location") ?? "";
  expect(res.status, `expected a redirect to a page, got ${res.status} ${location}`).toBe(302);
  expect(location.startsWith("/u2/"), location).toBe(true);
  return location;
}

/** Logs in through the real pages: /authorize, the login page, the form post. Answers the final response. */
export async function loginThroughPages(host: string, client: TestClient, email: string, params: Record<string, string> = {}, password = PASSWORD) {
  const start = await startLogin(host, client, params);
  const page = await openPage(host, pageLocation(start));
  expect(page.status, page.html).toBe(200);
  return submit(host, page, { email, password });
}

/** The code of a redirect to the callback (fails the test on an error redirect). */
export function codeOf(res: Response): string {
  const { query } = redirectParams(res);
  expect(query.get("error"), query.get("error_description") ?? "").toBeNull();
  const code = query.get("code");
  expect(code).toBeTruthy();
  return code as string;
}

/** Exchanges a code at the token endpoint and decodes the tokens. */
export async function exchange(host: string, client: TestClient, code: string) {
  const res = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
  const body = (await res.json()) as { access_token: string; id_token: string; refresh_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return { ...body, idClaims: decodeJwt(body.id_token) as JWTPayload & Record<string, unknown>, accessClaims: decodeJwt(body.access_token) as JWTPayload & Record<string, unknown> };
}

/** The data-error-code of an error page or form. */
export const errorCode = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];
