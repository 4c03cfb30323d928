import { importX509 } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, createTenant } from "../helpers/api";
import { DAY, hostOf, listKeys, onTenant } from "../helpers/keys";
import {
  ACS,
  authnRequest,
  deflated,
  logIn,
  plainBase64,
  postedForm,
  readResponse,
  SP_ENTITY,
  ssoPost,
  ssoRedirect,
  verifyEnveloped,
  samlApp,
  samlSetup,
  SAML_USER_PASSWORD,
} from "../helpers/saml";

/**
 * SAML 2.0 identity provider (issue 14 point 4): metadata, SP-initiated login over both bindings through the
 * universal login, the signed response and its conditions, SSO with a live session, refusals, and which key
 * signs while keys rotate (injected clock).
 */

const PASSWORD = SAML_USER_PASSWORD;
const at = (ms: number) => vi.setSystemTime(new Date(ms));
afterEach(() => {
  vi.useRealTimers();
});

const errorCode = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];


const setup = samlSetup;

/** The certificates the metadata publishes, in order. */
async function metadataCerts(tenant: string, clientId: string): Promise<string[]> {
  const res = await call(`/samlp/metadata/${clientId}`, { host: hostOf(tenant) });
  expect(res.status).toBe(200);
  return [...(await res.text()).matchAll(/<X509Certificate>([^<]+)<\/X509Certificate>/g)].map((m) => m[1] ?? "");
}

const certBody = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, "");

/** Logs in through the SP-initiated redirect binding and answers the posted form and the session cookie. */
async function spInitiatedLogin(tenant: string, clientId: string, email: string, request = authnRequest(), relayState = "rs-123") {
  const start = await ssoRedirect(tenant, clientId, { SAMLRequest: await deflated(request), RelayState: relayState });
  expect(start.status, await start.clone().text()).toBe(302);
  const location = start.headers.get("location") ?? "";
  expect(location).toMatch(/^\/u2\/login\?state=ls_/);
  const { res, cookie } = await logIn(tenant, location, email, PASSWORD);
  expect(res.status, await res.clone().text()).toBe(200);
  return { form: postedForm(await res.text()), cookie, res };
}

describe("SAML metadata", () => {
  it("is public XML naming the entity, both SSO bindings and the signing certificate", async () => {
    const { tenant, app } = await setup();
    const res = await call(`/samlp/metadata/${app.client_id}`, { host: hostOf(tenant) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/xml/);
    const xml = await res.text();
    expect(xml).toContain(`entityID="urn:${hostOf(tenant)}"`);
    const sso = `http://${hostOf(tenant)}/samlp/${app.client_id}`;
    expect(xml).toContain(`<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${sso}">`);
    expect(xml).toContain(`<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sso}">`);
    expect(xml).toContain("<NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>");
    const [current] = (await listKeys(tenant)).filter((k) => k.current && k.alg === "RS256");
    expect(await metadataCerts(tenant, app.client_id)).toEqual([certBody(current?.cert ?? "")]);
  });

  it("unknown client: 404", async () => {
    const { tenant } = await setup();
    expect((await call("/samlp/metadata/nope", { host: hostOf(tenant) })).status).toBe(404);
    expect((await ssoRedirect(tenant, "nope", {})).status).toBe(404);
  });

  it("lists the next key as an extra KeyDescriptor during activation; after it activates it alone signs", async () => {
    const { tenant, app, email } = await setup();
    const [original] = await listKeys(tenant);
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    at(t0);
    const rotated = await onTenant(tenant, "POST", "/keys/signing/rotate", { activate_in_days: 2, grace_days: 1 });
    expect(rotated.status).toBe(201);
    const next = (await rotated.json()) as { kid: string; cert: string };
    expect(await metadataCerts(tenant, app.client_id)).toEqual([certBody(original?.cert ?? ""), certBody(next.cert)]);
    const before = readResponse((await spInitiatedLogin(tenant, app.client_id, email)).form.fields.SAMLResponse ?? "");
    expect(before.text("X509Certificate")).toBe(certBody(original?.cert ?? ""));

    // Activated, the original in its grace period: the current key signs and alone is listed.
    at(t0 + 2 * DAY + 1000);
    expect(await metadataCerts(tenant, app.client_id)).toEqual([certBody(next.cert)]);
    const during = readResponse((await spInitiatedLogin(tenant, app.client_id, email)).form.fields.SAMLResponse ?? "");
    expect(during.text("X509Certificate")).toBe(certBody(next.cert));
    const key = await importX509(next.cert, "RS256");
    const assertion = during.find("Assertion");
    expect(assertion && (await verifyEnveloped(during.root, assertion, key))).toBe(true);
  });
});

describe("who can reach the SAML routes", () => {
  it("metadata is public and credentials play no part; a client of another tenant is unknown here (404)", async () => {
    const { tenant, app } = await setup();
    const other = await setup();
    const anon = await call(`/samlp/metadata/${app.client_id}`, { host: hostOf(tenant) });
    const withJunk = await call(`/samlp/metadata/${app.client_id}`, { host: hostOf(tenant), headers: { authorization: "Bearer not-a-token" } });
    expect(anon.status).toBe(200);
    expect(withJunk.status).toBe(200);
    expect(await withJunk.text()).toBe(await anon.text());
    expect((await call(`/samlp/metadata/${other.app.client_id}`, { host: hostOf(tenant) })).status).toBe(404);
    const crossTenant = await ssoRedirect(tenant, other.app.client_id, { SAMLRequest: await deflated(authnRequest()) });
    expect(crossTenant.status).toBe(404);
  });

  it("the SSO route needs nothing but a valid client with the samlp addon: no token, no cookie", async () => {
    const { tenant, app } = await setup();
    const res = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest()) });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^\/u2\/login\?state=ls_/);
  });
});

describe("SP-initiated SAML login", () => {
  it("HTTP-Redirect: the login page, then a signed response POSTed to the ACS with RelayState and InResponseTo", async () => {
    const { tenant, app, email, user } = await setup();
    const { form, res } = await spInitiatedLogin(tenant, app.client_id, email, authnRequest({ id: "_sp_req_42" }), "state/with spaces&more");
    expect(form.action).toBe(ACS);
    expect(form.fields.RelayState).toBe("state/with spaces&more");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("form-action https://sp.example.com");
    const saml = readResponse(form.fields.SAMLResponse ?? "");
    expect(saml.attr(saml.root, "InResponseTo")).toBe("_sp_req_42");
    expect(saml.attr(saml.root, "Destination")).toBe(ACS);
    expect(saml.attr(saml.find("StatusCode"), "Value")).toBe("urn:oasis:names:tc:SAML:2.0:status:Success");
    expect(saml.text("Issuer")).toBe(`urn:${hostOf(tenant)}`);
    expect(saml.text("Audience")).toBe(SP_ENTITY);
    const confirmation = saml.find("SubjectConfirmationData");
    expect(saml.attr(confirmation, "Recipient")).toBe(ACS);
    expect(saml.attr(confirmation, "InResponseTo")).toBe("_sp_req_42");
    // NameID: the first probe with a value (the user id, nameidentifier).
    expect(saml.text("NameID")).toBe(user.user_id);
    const conditions = saml.find("Conditions");
    const lifetime = Date.parse(saml.attr(conditions, "NotOnOrAfter") ?? "") - Date.parse(saml.attr(conditions, "NotBefore") ?? "");
    expect(lifetime).toBe(3600_000);
    expect(saml.xml).toContain(`<saml:AttributeValue xsi:type="xs:string">${email}</saml:AttributeValue>`);
    // The assertion's signature verifies with the tenant's current RS256 certificate; the response is unsigned.
    const [current] = (await listKeys(tenant)).filter((k) => k.current && k.alg === "RS256");
    const key = await importX509(current?.cert ?? "", "RS256");
    const assertion = saml.find("Assertion");
    expect(assertion && (await verifyEnveloped(saml.root, assertion, key))).toBe(true);
    expect(await verifyEnveloped(saml.root, saml.root, key)).toBe(false);
  });

  it("addons.samlp settings shape the response: audience, recipient, destination, mappings, NameID, lifetime, signResponse", async () => {
    const { tenant, app, email } = await setup({
      audience: "urn:custom:audience",
      recipient: "https://sp.example.com/recipient",
      destination: "https://sp.example.com/destination",
      issuer: "urn:custom:idp",
      mappings: { email: "mail", nickname: ["nick", "alias"] },
      nameIdentifierFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      nameIdentifierProbes: ["mail"],
      lifetimeInSeconds: 120,
      signResponse: true,
      createUpnClaim: false,
      passthroughClaimsWithNoMapping: false,
    });
    const { form } = await spInitiatedLogin(tenant, app.client_id, email);
    const saml = readResponse(form.fields.SAMLResponse ?? "");
    expect(saml.text("Audience")).toBe("urn:custom:audience");
    expect(saml.text("Issuer")).toBe("urn:custom:idp");
    expect(saml.attr(saml.find("SubjectConfirmationData"), "Recipient")).toBe("https://sp.example.com/recipient");
    expect(saml.attr(saml.root, "Destination")).toBe("https://sp.example.com/destination");
    expect(saml.text("NameID")).toBe(email);
    expect(saml.attr(saml.find("NameID"), "Format")).toBe("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress");
    expect(saml.xml).toContain('<saml:Attribute Name="mail"');
    expect(saml.xml).not.toContain("identity/claims/upn");
    expect(saml.xml).not.toContain("http://schemas.auth0.com/");
    const conditions = saml.find("Conditions");
    expect(Date.parse(saml.attr(conditions, "NotOnOrAfter") ?? "") - Date.parse(saml.attr(conditions, "NotBefore") ?? "")).toBe(120_000);
    const [current] = (await listKeys(tenant)).filter((k) => k.current);
    const key = await importX509(current?.cert ?? "", "RS256");
    expect(await verifyEnveloped(saml.root, saml.root, key)).toBe(true);
  });

  it("HTTP-POST binding (plain base64) works the same", async () => {
    const { tenant, app, email } = await setup();
    const start = await ssoPost(tenant, app.client_id, { SAMLRequest: plainBase64(authnRequest({ id: "_post_1" })), RelayState: "p" });
    expect(start.status).toBe(302);
    const { res } = await logIn(tenant, start.headers.get("location") ?? "", email, PASSWORD);
    const { fields } = postedForm(await res.text());
    expect(fields.RelayState).toBe("p");
    expect(readResponse(fields.SAMLResponse ?? "").attr(readResponse(fields.SAMLResponse ?? "").root, "InResponseTo")).toBe("_post_1");
  });

  it("a live session answers at once (SSO); ForceAuthn shows the login page again", async () => {
    const { tenant, app, email } = await setup();
    const { cookie } = await spInitiatedLogin(tenant, app.client_id, email);
    expect(cookie).toBeTruthy();
    const again = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest({ id: "_second" })) }, cookie);
    expect(again.status).toBe(200);
    const saml = readResponse(postedForm(await again.text()).fields.SAMLResponse ?? "");
    expect(saml.attr(saml.root, "InResponseTo")).toBe("_second");
    const forced = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest({ extra: ' ForceAuthn="true"' })) }, cookie);
    expect(forced.status).toBe(302);
    expect(forced.headers.get("location")).toMatch(/^\/u2\/login\?state=/);
  });

  it("the response is single-use with the login: replaying the login form does not answer again", async () => {
    const { tenant, app, email } = await setup();
    const start = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest()) });
    const location = start.headers.get("location") ?? "";
    expect((await logIn(tenant, location, email, PASSWORD)).res.status).toBe(200);
    await expect(logIn(tenant, location, email, PASSWORD)).resolves.toMatchObject({ res: expect.objectContaining({ status: 400 }) });
  });
});

describe("SAML keys", () => {
  it("a key rotated into the saml_encryption bucket signs SAML and is the metadata's certificate", async () => {
    const { tenant, app, email } = await setup();
    const rotated = await onTenant(tenant, "POST", "/keys/signing/rotate?type=saml_encryption", {});
    expect(rotated.status).toBe(201);
    const samlKey = (await rotated.json()) as { kid: string; cert: string };
    const [jwtKey] = await listKeys(tenant);
    expect(samlKey.kid).not.toBe(jwtKey?.kid);
    expect(await metadataCerts(tenant, app.client_id)).toEqual([certBody(samlKey.cert)]);
    const saml = readResponse((await spInitiatedLogin(tenant, app.client_id, email)).form.fields.SAMLResponse ?? "");
    expect(saml.text("X509Certificate")).toBe(certBody(samlKey.cert));
    const assertion = saml.find("Assertion");
    expect(assertion && (await verifyEnveloped(saml.root, assertion, await importX509(samlKey.cert, "RS256")))).toBe(true);
  });
});

describe("passive requests", () => {
  it("IsPassive with no session answers a signed Responder/NoPassive status to the ACS, no page; with a session, an assertion", async () => {
    const { tenant, app, email } = await setup();
    const passive = authnRequest({ id: "_passive", extra: ' IsPassive="true"' });
    const res = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(passive), RelayState: "r" });
    expect(res.status).toBe(200);
    const { action, fields } = postedForm(await res.text());
    expect(action).toBe(ACS);
    expect(fields.RelayState).toBe("r");
    const saml = readResponse(fields.SAMLResponse ?? "");
    expect(saml.attr(saml.root, "InResponseTo")).toBe("_passive");
    expect(saml.find("Assertion")).toBeUndefined();
    expect(saml.xml).toContain('<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:NoPassive">');
    const [current] = (await listKeys(tenant)).filter((k) => k.current);
    expect(await verifyEnveloped(saml.root, saml.root, await importX509(current?.cert ?? "", "RS256"))).toBe(true);

    const { cookie } = await spInitiatedLogin(tenant, app.client_id, email);
    const withSession = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(passive) }, cookie);
    expect(readResponse(postedForm(await withSession.text()).fields.SAMLResponse ?? "").find("Assertion")).toBeDefined();
  });
});

describe("SAML refusals", () => {
  it("an ACS URL the application did not register is refused before any login", async () => {
    const { tenant, app } = await setup();
    const res = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest({ acs: "https://evil.example.com/acs" })) });
    expect(res.status).toBe(400);
    expect(errorCode(await res.text())).toBe("INVALID_ACS_URL");
  });

  it("a client without the samlp addon: 403", async () => {
    const tenant = await createTenant();
    const created = await onTenant(tenant, "POST", "/clients", { name: "plain", callbacks: [ACS] });
    const { client_id } = (await created.json()) as { client_id: string };
    const res = await ssoRedirect(tenant, client_id, { SAMLRequest: await deflated(authnRequest()) });
    expect(res.status).toBe(403);
    expect(errorCode(await res.text())).toBe("SAML_NOT_ENABLED");
  });

  it("malformed, hostile or foreign requests are 400 pages", async () => {
    const { tenant, app } = await setup();
    const cases: [string, string][] = [
      ["!!!", "INVALID_SAML_REQUEST"],
      [plainBase64(`<!DOCTYPE x [<!ENTITY a "b">]>${authnRequest()}`), "INVALID_SAML_REQUEST"],
      [plainBase64("<not-xml"), "INVALID_SAML_REQUEST"],
      [await deflated(authnRequest({ extra: ' Destination="https://elsewhere.example.com/sso"' })), "INVALID_DESTINATION"],
      [await deflated(authnRequest().replace("bindings:HTTP-POST", "bindings:HTTP-Artifact")), "UNSUPPORTED_BINDING"],
    ];
    for (const [SAMLRequest, code] of cases) {
      const res = await ssoRedirect(tenant, app.client_id, { SAMLRequest });
      expect(res.status, code).toBe(400);
      expect(errorCode(await res.text())).toBe(code);
    }
    const longRelay = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest()), RelayState: "x".repeat(2000) });
    expect(longRelay.status).toBe(400);
    // Odd bytes and odd unicode: a 400 page, never a 500.
    const odd = [
      btoa(String.fromCharCode(0xff, 0xfe, 0x00, 0x01, 0x80)),
      plainBase64("<a>\u0000</a>"),
      btoa(String.fromCharCode(0x3c, 0xc3, 0x28)),
      plainBase64(authnRequest().replace("urn:sp.example.com", "urn:\u202e\ud83d\ude00")).slice(0, -4),
    ];
    for (const SAMLRequest of odd) {
      const res = await ssoRedirect(tenant, app.client_id, { SAMLRequest });
      expect(res.status, SAMLRequest).toBe(400);
    }
    const repeated = await call(`/samlp/${app.client_id}?SAMLRequest=a&SAMLRequest=b`, { host: hostOf(tenant) });
    expect(repeated.status).toBe(400);
    const notForm = await call(`/samlp/${app.client_id}`, { method: "POST", host: hostOf(tenant), headers: { "content-type": "application/json" }, body: "{}" });
    expect(notForm.status).toBe(400);
    // Unicode in RelayState round-trips untouched.
    const unicode = await ssoRedirect(tenant, app.client_id, { SAMLRequest: await deflated(authnRequest()), RelayState: "é/😀?x=1&y=<z>" });
    expect(unicode.status).toBe(302);
  });

  it("IdP-initiated login is off by default; when enabled it answers unsolicited to the recipient", async () => {
    const { tenant, app, email } = await setup();
    const refused = await ssoRedirect(tenant, app.client_id, {});
    expect(refused.status).toBe(400);
    expect(errorCode(await refused.text())).toBe("IDP_INITIATED_DISABLED");

    const enabled = await samlApp(tenant, { allowIdpInitiated: true, recipient: ACS, audience: SP_ENTITY });
    const start = await ssoRedirect(tenant, enabled.client_id, { RelayState: "deep/link" });
    expect(start.status).toBe(302);
    const { res } = await logIn(tenant, start.headers.get("location") ?? "", email, PASSWORD);
    const { action, fields } = postedForm(await res.text());
    expect(action).toBe(ACS);
    expect(fields.RelayState).toBe("deep/link");
    const saml = readResponse(fields.SAMLResponse ?? "");
    expect(saml.attr(saml.root, "InResponseTo")).toBeUndefined();
    expect(saml.attr(saml.find("SubjectConfirmationData"), "InResponseTo")).toBeUndefined();
    expect(saml.text("Audience")).toBe(SP_ENTITY);
  });
});

describe("addons on clients", () => {
  it("are stored and returned; wrong types and unknown addons are 400", async () => {
    const tenant = await createTenant();
    const app = await samlApp(tenant, { audience: "urn:x", signResponse: true, lifetimeInSeconds: 600 });
    expect(app.addons.samlp).toEqual({ audience: "urn:x", signResponse: true, lifetimeInSeconds: 600 });
    const read = (await (await onTenant(tenant, "GET", `/clients/${app.client_id}`)).json()) as { addons: unknown };
    expect(read.addons).toEqual({ samlp: { audience: "urn:x", signResponse: true, lifetimeInSeconds: 600 } });
    for (const addons of [{ samlp: { signatureAlgorithm: "rsa-md5" } }, { samlp: { lifetimeInSeconds: "1h" } }, { samlp: { mappings: { email: 5 } } }, { wsfed: {} }]) {
      const res = await onTenant(tenant, "POST", "/clients", { name: "bad", addons });
      expect(res.status, JSON.stringify(addons)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, errorCode: expect.any(String) });
    }
    const cleared = await onTenant(tenant, "PATCH", `/clients/${app.client_id}`, { addons: null });
    expect(cleared.status).toBe(200);
    expect(((await cleared.json()) as { addons?: unknown }).addons).toBeUndefined();
  });
});
