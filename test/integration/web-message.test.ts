import { beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { authorize, seedClient, seedUser, sessionCookie, type TestClient } from "../helpers/flows";

/** response_mode=web_message (the reference platform's SPA silent authentication), issue 10 point 6. */

const CALLBACK = "https://spa.example.com/";
const ORIGIN = "https://spa.example.com";
let tenant: string;
let host: string;
let client: TestClient;
let cookie: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], web_origins: [ORIGIN], token_endpoint_auth_method: "none" });
  const user = await seedUser(tenant, "spa@example.com");
  cookie = await sessionCookie(tenant, user.user_id, client.client_id);
});

const silent = (extra: Record<string, string> = {}, withCookie = true) =>
  authorize(
    {
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      response_type: "code",
      response_mode: "web_message",
      prompt: "none",
      scope: "openid",
      state: "st-1",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      ...extra,
    },
    { host, ...(withCookie ? { cookie } : {}) },
  );

/** The object the page posts, read back from its script. */
async function posted(res: Response): Promise<{ message: { type: string; response: Record<string, string> }; target: string }> {
  const html = await res.text();
  const match = /postMessage\((.*), ("[^"]*")\);/.exec(html);
  if (!match) throw new Error(`no postMessage in ${html}`);
  return { message: JSON.parse(match[1] as string), target: JSON.parse(match[2] as string) };
}

describe("GET /authorize with response_mode=web_message", () => {
  it("posts the code and state to the registered origin from a page only that origin may frame", async () => {
    const res = await silent();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain(`frame-ancestors ${ORIGIN}`);
    expect(res.headers.get("x-frame-options")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
    const { message, target } = await posted(res);
    expect(target).toBe(ORIGIN);
    expect(message.type).toBe("authorization_response");
    expect(message.response.state).toBe("st-1");
    expect(message.response.code).toMatch(/^ac1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it("delivers login_required the same way when there is no session", async () => {
    const { message } = await posted(await silent({}, false));
    expect(message.response).toMatchObject({ error: "login_required", state: "st-1" });
  });

  it("refuses an origin the application did not register in web_origins, with no page to frame", async () => {
    const other = await seedClient(tenant, { callbacks: [CALLBACK], web_origins: [], token_endpoint_auth_method: "none" });
    const res = await silent({ client_id: other.client_id });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(/web_origins/);
  });

  it("cannot be broken out of: a hostile state stays data inside the script", async () => {
    const res = await silent({ state: "</script><script>alert(1)</script>\u2028" });
    const html = await res.clone().text();
    expect(html).not.toContain("</script><script>alert(1)");
    const { message } = await posted(res);
    expect(message.response.state).toBe("</script><script>alert(1)</script>\u2028");
  });
});
