import { expect } from "vitest";
import { BASE, call, mgmt } from "./api";
import { pendingLogin } from "./flows";

/**
 * A minimal browser for the /u2 pages through the front worker: a cookie jar (Set-Cookie applied, Max-Age=0
 * deletes), form posts, and no automatic redirects so each hop can be checked.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();

  constructor(readonly host: string) {}

  private store(res: Response): Response {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async get(path: string): Promise<Response> {
    return this.store(await call(path, { host: this.host, redirect: "manual", headers: { cookie: this.cookieHeader() } }));
  }

  async post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.store(
      await call(path, {
        method: "POST",
        host: this.host,
        redirect: "manual",
        headers: { cookie: this.cookieHeader(), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      }),
    );
  }

  /** A form post with extra request headers (Origin, Sec-Fetch-Site), as a browser on another page sends it. */
  async fetchWith(path: string, fields: Record<string, string>, headers: Record<string, string>): Promise<Response> {
    return this.store(
      await call(path, {
        method: "POST",
        host: this.host,
        redirect: "manual",
        headers: { cookie: this.cookieHeader(), "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields).toString(),
      }),
    );
  }

  /** GET the Location of a redirect (same host), asserting it is one. */
  async follow(res: Response): Promise<Response> {
    expect(res.status, `expected a redirect, got ${res.status}: ${(await res.clone().text()).slice(0, 300)}`).toBe(302);
    const location = new URL(res.headers.get("location") ?? "", `http://${this.host}`);
    return this.get(location.pathname + location.search);
  }
}

/** The `_csrf` value of the first form on a page. */
export const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
/** The `data-error-code` of a page. */
export const errorCodeOf = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];
/** The manual TOTP key shown on the enrollment page, spaces removed. */
export const totpSecretOf = (html: string) => (/id="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(html)?.[1] ?? "").replace(/ /g, "");
/** The recovery codes listed on their page. */
export const recoveryCodesOf = (html: string) => [...html.matchAll(/<li><code>([A-Z0-9-]+)<\/code><\/li>/g)].map((m) => m[1] as string);
/** The path and query of a redirect. */
export const locationOf = (res: Response) => {
  const url = new URL(res.headers.get("location") ?? "", BASE);
  return url.origin === BASE ? url.pathname + url.search : url.toString();
};

const asTenant = (tenant: string) => ({ headers: { "tenant-id": tenant } });

/** Turns guardian factors on or off through the management API. */
export async function setFactors(tenant: string, factors: Record<string, boolean>): Promise<void> {
  for (const [name, enabled] of Object.entries(factors)) {
    const res = await mgmt("PUT", `/guardian/factors/${name}`, { ...asTenant(tenant), body: { enabled } });
    expect(res.status, await res.clone().text()).toBe(200);
  }
}

export async function setPolicy(tenant: string, policies: string[]): Promise<void> {
  const res = await mgmt("PUT", "/guardian/policies", { ...asTenant(tenant), body: policies });
  expect(res.status, await res.clone().text()).toBe(200);
}

/**
 * A password login in a fresh browser: /authorize's login session, then the form post. Returns the browser
 * and the response to the post (a redirect to /u2/mfa under a policy, to the callback otherwise).
 */
export async function passwordLogin(tenant: string, clientId: string, email: string, password: string, request: Record<string, string> = {}) {
  const browser = new TestBrowser(`${tenant}.localhost:8787`);
  const login = await pendingLogin(tenant, clientId, request);
  browser.cookies.set("gh_csrf", login.csrf);
  const res = await browser.post(`/u2/login?state=${login.state}`, { _csrf: login.csrf, email, password });
  return { browser, res, login };
}
