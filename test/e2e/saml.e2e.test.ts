import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { deflateRawSync } from "node:zlib";
import { DOMParser } from "@xmldom/xmldom";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SignedXml } from "xml-crypto";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { MANAGEMENT_AUDIENCE } from "./helpers/auth0";
import { type ContextLog, isLoopbackUrl, launchChromium, newRecordedContext, screenshot } from "./helpers/browser";

/**
 * SAML SP-initiated login end to end: a tiny service provider on 127.0.0.1 reads Gatehouse's IdP metadata,
 * sends the browser (headless Debian Chromium) to /samlp/{client_id} with a deflated AuthnRequest
 * (HTTP-Redirect binding) and a RelayState; the user logs in on the universal login page; the SP receives
 * the SAMLResponse by HTTP-POST and checks it as a real SP would: every signature with xml-crypto against
 * the metadata's certificate, InResponseTo, Destination, Recipient, Audience and the validity window.
 */

const SAML_NS = { protocol: "urn:oasis:names:tc:SAML:2.0:protocol", assertion: "urn:oasis:names:tc:SAML:2.0:assertion" };
const DS = "http://www.w3.org/2000/09/xmldsig#";
const random = () => randomBytes(6).toString("hex");

interface Received {
  relayState: string | undefined;
  checks: Record<string, unknown>;
  nameId: string | null;
  email: string | null;
}

/** The service provider: issues AuthnRequests, consumes responses, records what it verified. */
async function startServiceProvider(idpCertificate: () => string, ssoUrl: () => string) {
  const pending = new Set<string>();
  const received: Received[] = [];
  let origin = "";
  const entityId = () => `${origin}/metadata`;
  const acs = () => `${origin}/acs`;

  function consume(body: string): Received {
    const form = new URLSearchParams(body);
    const xml = Buffer.from(form.get("SAMLResponse") ?? "", "base64").toString("utf8");
    const doc = new DOMParser().parseFromString(xml, "text/xml");
    const response = doc.documentElement;
    const cert = `-----BEGIN CERTIFICATE-----\n${idpCertificate()}\n-----END CERTIFICATE-----\n`;
    const signatures = Array.from(doc.getElementsByTagNameNS(DS, "Signature"));
    const verified = signatures.map((node) => {
      const sig = new SignedXml({ publicCert: cert });
      sig.loadSignature(node as never);
      try {
        return sig.checkSignature(xml) && (node.parentNode as unknown as { localName: string }).localName;
      } catch {
        return false;
      }
    });
    const assertion = doc.getElementsByTagNameNS(SAML_NS.assertion, "Assertion")[0];
    const conditions = doc.getElementsByTagNameNS(SAML_NS.assertion, "Conditions")[0];
    const confirmation = doc.getElementsByTagNameNS(SAML_NS.assertion, "SubjectConfirmationData")[0];
    const audience = doc.getElementsByTagNameNS(SAML_NS.assertion, "Audience")[0]?.textContent;
    const inResponseTo = response?.getAttribute("InResponseTo") ?? "";
    const now = Date.now();
    const notBefore = Date.parse(conditions?.getAttribute("NotBefore") ?? "");
    const notOnOrAfter = Date.parse(conditions?.getAttribute("NotOnOrAfter") ?? "");
    const attributes = Array.from(doc.getElementsByTagNameNS(SAML_NS.assertion, "Attribute"));
    const email = attributes.find((a) => a.getAttribute("Name")?.endsWith("/emailaddress"))?.textContent ?? null;
    const checks = {
      assertionSignatureVerifies: verified.includes("Assertion"),
      everySignatureVerifies: verified.length > 0 && verified.every(Boolean),
      status: doc.getElementsByTagNameNS(SAML_NS.protocol, "StatusCode")[0]?.getAttribute("Value"),
      inResponseToIsOurs: pending.delete(inResponseTo),
      confirmationInResponseTo: confirmation?.getAttribute("InResponseTo") === inResponseTo,
      destination: response?.getAttribute("Destination") === acs(),
      recipient: confirmation?.getAttribute("Recipient") === acs(),
      audience: audience === entityId(),
      withinValidity: notBefore - 60_000 <= now && now < notOnOrAfter,
      assertionPresent: Boolean(assertion),
    };
    const nameId = doc.getElementsByTagNameNS(SAML_NS.assertion, "NameID")[0]?.textContent ?? null;
    return { relayState: form.get("RelayState") ?? undefined, checks, nameId, email };
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", origin);
    if (req.method === "GET" && url.pathname === "/login") {
      const id = `_sp${random()}`;
      pending.add(id);
      const request = `<samlp:AuthnRequest xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${id}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${ssoUrl()}" AssertionConsumerServiceURL="${acs()}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"><saml:Issuer>${entityId()}</saml:Issuer></samlp:AuthnRequest>`;
      const target = new URL(ssoUrl());
      target.searchParams.set("SAMLRequest", deflateRawSync(Buffer.from(request)).toString("base64"));
      target.searchParams.set("RelayState", url.searchParams.get("next") ?? "/");
      res.writeHead(302, { location: target.toString() }).end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/acs") {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        const result = consume(body);
        received.push(result);
        const ok = Object.values(result.checks).every((v) => v === true || v === "urn:oasis:names:tc:SAML:2.0:status:Success");
        res.writeHead(ok ? 200 : 403, { "content-type": "text/html; charset=utf-8" });
        res.end(`<!doctype html><title>SP</title><h1 id="result">${ok ? "Signed in" : "Rejected"} as ${result.nameId ?? "?"}</h1>`);
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    entityId,
    acs,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("SAML SP-initiated login in headless Chromium", () => {
  let server: RunningServer;
  let browser: Browser;
  let sp: Awaited<ReturnType<typeof startServiceProvider>>;
  let clientId = "";
  let idpCertificate = "";
  const user = { email: `saml-${random()}@example.com`, password: `Correct-Horse-${random()}` };
  const logs: ContextLog[] = [];
  let failed = false;

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    sp = await startServiceProvider(
      () => idpCertificate,
      () => `${server.baseUrl}/samlp/${clientId}`,
    );
    const tokenRes = await fetch(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: server.clientId, client_secret: server.clientSecret, audience: MANAGEMENT_AUDIENCE }),
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const created = await fetch(`${server.baseUrl}/api/v2/clients`, {
      method: "POST",
      headers: { authorization: `Bearer ${access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "E2E SAML SP", app_type: "regular_web", callbacks: [sp.acs()], addons: { samlp: { nameIdentifierProbes: ["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"] } } }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    clientId = ((await created.json()) as { client_id: string }).client_id;
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: clientId, email: user.email, password: user.password, connection: "Username-Password-Authentication" }),
    });
    expect(signup.status, await signup.clone().text()).toBe(200);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await sp?.close().catch(() => undefined);
    if (failed && server) {
      process.stderr.write(`\n--- wrangler output (saml.e2e) ---\n${server.log()}\n`);
      for (const log of logs) process.stderr.write(`requests:\n  ${log.requests.join("\n  ")}\n${log.consoleErrors.join("\n")}\n${log.pageErrors.join("\n")}\n`);
    }
    await server?.stop();
  }, 60_000);

  it("the SP reads the IdP metadata: entity id, SSO endpoint and signing certificate", async () => {
    const res = await fetch(`${server.baseUrl}/samlp/metadata/${clientId}`);
    expect(res.status).toBe(200);
    const doc = new DOMParser().parseFromString(await res.text(), "text/xml");
    const md = "urn:oasis:names:tc:SAML:2.0:metadata";
    expect(doc.documentElement?.getAttribute("entityID")).toBe(`urn:${new URL(server.baseUrl).host}`);
    const sso = Array.from(doc.getElementsByTagNameNS(md, "SingleSignOnService")).map((e) => e.getAttribute("Location"));
    expect(sso).toEqual([`${server.baseUrl}/samlp/${clientId}`, `${server.baseUrl}/samlp/${clientId}`]);
    idpCertificate = doc.getElementsByTagNameNS(DS, "X509Certificate")[0]?.textContent ?? "";
    expect(idpCertificate.length).toBeGreaterThan(500);
  });

  it("the user logs in on the universal login page and the SP receives a response whose signature and conditions verify", async () => {
    const { context, page, log } = await newRecordedContext(browser);
    logs.push(log);
    try {
      await page.goto(`${sp.origin}/login?next=${encodeURIComponent("/reports?id=7")}`);
      await page.waitForURL(/\/u2\/login\?state=/);
      await page.getByLabel("Email address").fill(user.email);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      await page.getByRole("button", { name: /continue|log in/i }).click();
      await page.waitForURL(`${sp.origin}/acs`);
      expect(await page.locator("#result").textContent()).toBe(`Signed in as ${user.email}`);
      await screenshot(page, "saml-sp-signed-in.png");
      const [received] = sp.received;
      expect(received?.checks).toEqual({
        assertionSignatureVerifies: true,
        everySignatureVerifies: true,
        status: "urn:oasis:names:tc:SAML:2.0:status:Success",
        inResponseToIsOurs: true,
        confirmationInResponseTo: true,
        destination: true,
        recipient: true,
        audience: true,
        withinValidity: true,
        assertionPresent: true,
      });
      expect(received?.relayState).toBe("/reports?id=7");
      expect(received?.email).toBe(user.email);

      // A second SP-initiated login in the same browser is answered from the session, without the page.
      await page.goto(`${sp.origin}/login?next=again`);
      await page.waitForURL(`${sp.origin}/acs`);
      expect(await page.locator("#result").textContent()).toBe(`Signed in as ${user.email}`);
      expect(sp.received[1]?.relayState).toBe("again");
      expect(Object.values(sp.received[1]?.checks ?? {}).every((v) => v === true || String(v).endsWith(":Success"))).toBe(true);
      expect(log.requests.filter((u) => !isLoopbackUrl(u))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
