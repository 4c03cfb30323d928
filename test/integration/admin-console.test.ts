import { describe, expect, it } from "vitest";
import { ADMIN, consoleLogin } from "../helpers/console";

describe("admin console login (issue 30)", () => {
  it("logs the seeded admin in through the authorization code flow and shows the tenants", async () => {
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password);
    const html = await page.text();
    expect(page.status, html.slice(0, 2000)).toBe(200);
    expect(html).toContain("control_plane");
    expect([...browser.cookies.keys()]).toContain("gh_console");
  });
});
