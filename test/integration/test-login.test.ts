import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { randomToken } from "../../src/shared/crypto/random";
import { hashSecret } from "../../src/worker/login/session";
import { call, createTenant } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let issuer: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  issuer = `http://${host}/`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

const getPage = (path: string) => call(path, { host, redirect: "manual" });
const errorCode = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];

describe("GET /u2/info (test login)", () => {
  let user: { user_id: string };
  let cookie: string;
  beforeAll(async () => {
    user = await seedUser(tenant, "info@example.com");
    cookie = await sessionCookie(tenant, user.user_id, client.client_id);
  });

  it("redeems a code issued for /u2/info and shows the decoded claims and token details", async () => {
    const redirectUri = `${issuer}u2/info?client_id=${client.client_id}`;
    const res = await authorize({ client_id: client.client_id, redirect_uri: redirectUri, response_type: "code", scope: "openid email", state: "t" }, { host, cookie });
    const location = redirectParams(res).url;
    expect(location.pathname).toBe("/u2/info");
    const page = await getPage(location.pathname + location.search);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain(`<th scope="row">sub</th><td>${user.user_id}</td>`);
    expect(html).toContain("info@example.com");
    expect(html).toContain('<th scope="row">token_type</th><td>Bearer</td>');
    expect(html).toContain("&quot;alg&quot;: &quot;RS256&quot;");
    // the code is spent
    expect((await getPage(location.pathname + location.search)).status).toBe(400);
  });

  it("also accepts a code issued for the bare /u2/info URL, with client_id in the query", async () => {
    const code = randomToken(32);
    await env.TENANT.getByName(tenant).codes().create({
      code_hash: await hashSecret(code),
      client_id: client.client_id,
      user_id: user.user_id,
      session_id: null,
      redirect_uri: `${issuer}u2/info`,
      grant: { scope: "openid", auth_time: Math.floor(Date.now() / 1000) },
      code_challenge: null,
      code_challenge_method: null,
      expires_at: Date.now() + 60_000,
    });
    const page = await getPage(`/u2/info?code=${code}&client_id=${client.client_id}`);
    expect(page.status).toBe(200);
  });

  it("refuses a code issued for another redirect_uri, which stays redeemable by its client", async () => {
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" }, { host, cookie });
    const code = redirectParams(res).query.get("code") as string;
    const page = await getPage(`/u2/info?code=${code}&client_id=${client.client_id}`);
    expect(page.status).toBe(400);
    expect(errorCode(await page.text())).toBe("INVALID_CODE");
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(tokens.status).toBe(200);
  });

  it("without a code or client_id it is a 400 page", async () => {
    expect((await getPage("/u2/info")).status).toBe(400);
  });
});
