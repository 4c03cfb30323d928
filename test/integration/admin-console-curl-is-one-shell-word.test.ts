import { describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { ADMIN, consoleLogin } from "../helpers/console";

/**
 * Security review (review5): "Show the API calls of this page" prints curl commands an operator pastes into a
 * shell. A path holds ids a tenant chose (a user id may contain `'`, which encodeURIComponent keeps), and the
 * URL was wrapped in single quotes as it was: a crafted id ended the quoting and the rest of it ran as shell
 * words in the operator's terminal. Every quoted word now escapes `'`, and $TOKEN is in double quotes so the
 * shell expands it.
 */

const decode = (html: string) => html.replaceAll("&#39;", "'").replaceAll("&quot;", '"').replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">");

describe("the console's API calls as curl", () => {
  it("a user id holding a quote stays inside the URL's quoting; the token is a shell variable", async () => {
    const tenant = await createTenant();
    const userId = "auth0|x'*'(y)";
    const created = await mgmt("POST", "/users", { headers: { "tenant-id": tenant }, body: { connection: "Username-Password-Authentication", email: "quote@example.com", password: "Quote-p4ssw0rd!", user_id: "x'*'(y)" } });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(((await created.json()) as { user_id: string }).user_id).toBe(userId);
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const page = await browser.get(`/admin/t/${tenant}/users/${encodeURIComponent(userId)}`);
    expect(page.status).toBe(200);
    const text = decode(await page.text());
    const quotedUrl = `'http://localhost:8787/api/v2/users/${encodeURIComponent(userId).replaceAll("'", "'\\''")}'`;
    expect(text).toContain(`curl -X GET ${quotedUrl} \\\n  -H "authorization: Bearer $TOKEN" \\\n  -H 'tenant-id: ${tenant}'`);
    // No command line prints the id's quote bare.
    for (const line of text.split("\n").filter((l) => l.startsWith("curl -X"))) {
      expect(line.replaceAll("'\\''", "")).not.toMatch(/'[^']*'[^ \\]/);
    }
  });
});
