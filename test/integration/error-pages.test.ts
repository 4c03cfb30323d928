import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { seedClient, type TestClient } from "../helpers/flows";

/**
 * Issue 29 point 6: a request that cannot go back to the application shows a browser an HTML page with the
 * error, its description and a trace id; a client that asks for JSON (or names no HTML) keeps the JSON body.
 */

const CALLBACK = "https://app.example.com/callback";
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

const authorizeUrl = (params: Record<string, string>) =>
  `/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s", ...params })}`;

const browse = (path: string, accept = BROWSER_ACCEPT) => call(path, { host, headers: { accept }, redirect: "manual" });

/** The text of an element with `id` in the page (the page escapes it; this reads it back). */
function textOf(html: string, id: string): string | undefined {
  return new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
}

describe("the HTML error page", () => {
  it("an unregistered redirect_uri shows the error, its description and a trace id to a browser", async () => {
    const res = await browse(authorizeUrl({ redirect_uri: "https://evil.example.com/cb" }));
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("location")).toBeNull();
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html><html lang="en"/);
    expect(textOf(html, "error-code")).toBe("invalid_request");
    expect(html).toContain("Invalid redirect URI - https://evil.example.com/cb");
    const traceId = textOf(html, "trace-id");
    expect(traceId).toMatch(/^[A-Za-z0-9_-]{12,}$/);
    expect(res.headers.get("x-trace-id")).toBe(traceId);
    // The login pages' protections hold on it too.
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("cache-control")).toContain("no-store");
  });

  it("an unknown client shows the page; each failure gets its own trace id", async () => {
    const first = await browse(authorizeUrl({ client_id: "nobody" }));
    const second = await browse(authorizeUrl({ client_id: "nobody" }));
    expect(first.status).toBe(400);
    const [a, b] = [await first.text(), await second.text()];
    expect(a).toContain('data-error-code="');
    expect(textOf(a, "trace-id")).not.toBe(textOf(b, "trace-id"));
  });

  it("takes Cloudflare's ray id as the trace id, but never an arbitrary header value", async () => {
    const ray = await call(authorizeUrl({ client_id: "nobody" }), { host, headers: { accept: BROWSER_ACCEPT, "cf-ray": "8f1e2d3c4b5a6978-AMS" } });
    expect(textOf(await ray.text(), "trace-id")).toBe("8f1e2d3c4b5a6978-AMS");
    const forged = await call(authorizeUrl({ client_id: "nobody" }), { host, headers: { accept: BROWSER_ACCEPT, "cf-ray": "<b>not-a-ray</b>" } });
    expect(textOf(await forged.text(), "trace-id")).toMatch(/^[A-Za-z0-9_-]{12,}$/);
  });

  it("escapes what the request put in the description", async () => {
    const res = await browse(authorizeUrl({ redirect_uri: "https://x.example/<script>alert(1)</script>" }));
    const html = await res.text();
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain("&lt;script&gt;");
  });

  it("carries the tenant's branding", async () => {
    await mgmt("PATCH", "/branding", { body: { colors: { primary: "#aa1100" } }, headers: { "tenant-id": tenant } });
    const res = await browse(authorizeUrl({ client_id: "nobody" }));
    expect(await res.text()).toContain("--gh-primary:#aa1100");
  });

  it("an unknown path on the login host is a 404 page for a browser", async () => {
    const res = await browse("/u2/nothing-here");
    expect(res.status).toBe(404);
    expect(textOf(await res.text(), "error-code")).toBe("not_found");
  });
});

describe("JSON stays for clients that ask for it", () => {
  for (const accept of ["application/json", "*/*", "application/json, text/html;q=0.5", ""]) {
    it(`Accept: ${JSON.stringify(accept)} gets the JSON error body`, async () => {
      const res = await browse(authorizeUrl({ redirect_uri: "https://evil.example.com/cb" }), accept);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request", error_description: "Invalid redirect URI - https://evil.example.com/cb" });
    });
  }

  it("a POST to the token endpoint keeps JSON even from a browser-like Accept", async () => {
    const res = await call("/oauth/token", { method: "POST", host, headers: { accept: BROWSER_ACCEPT, "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=nope" });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("an error that can go back to the application is still redirected, not shown", async () => {
    const res = await browse(authorizeUrl({ response_type: "nope" }));
    expect(res.status).toBe(302);
    expect(new URL(String(res.headers.get("location"))).searchParams.get("error")).toBe("unsupported_response_type");
  });
});
