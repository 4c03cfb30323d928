import { importX509 } from "jose";
import { describe, expect, it } from "vitest";
import { bindAction } from "../helpers/actions";
import { listKeys, onTenant } from "../helpers/keys";
import { ACS, authnRequest, deflated, logIn, postedForm, readResponse, samlApp, samlSetup, SAML_USER_PASSWORD, ssoRedirect, verifyEnveloped } from "../helpers/saml";

/**
 * A SAML login obeys the same rules as an OIDC one (issue 14 point 4): post-login actions and the
 * organization rule run on every login, SSO included, they see the `samlp` protocol, and a refusal reaches
 * the SP as a signed SAML Responder/RequestDenied status (saml-profiles-2.0-os §4.1.4.2), never as OAuth
 * error parameters. The profile the attributes come from is the user's whole profile, read by path.
 */

const PASSWORD = SAML_USER_PASSWORD;
const RESPONDER = "urn:oasis:names:tc:SAML:2.0:status:Responder";
const REQUEST_DENIED = "urn:oasis:names:tc:SAML:2.0:status:RequestDenied";


const setup = samlSetup;

/** Starts an SP-initiated login (HTTP-Redirect), logs in with the password, answers the page and the session cookie. */
async function interactiveLogin(tenant: string, clientId: string, email: string, id = "_req_1", relayState = "rs-1") {
  const start = await ssoRedirect(tenant, clientId, { SAMLRequest: await deflated(authnRequest({ id })), RelayState: relayState });
  expect(start.status, await start.clone().text()).toBe(302);
  const { res, cookie } = await logIn(tenant, start.headers.get("location") ?? "", email, PASSWORD);
  expect(res.status, await res.clone().text()).toBe(200);
  return { form: postedForm(await res.text()), cookie };
}

/** An SSO login with the session cookie: the page the SP's form is posted from. */
async function ssoLogin(tenant: string, clientId: string, cookie: string, id: string, relayState: string) {
  const res = await ssoRedirect(tenant, clientId, { SAMLRequest: await deflated(authnRequest({ id })), RelayState: relayState }, cookie);
  expect(res.status, await res.clone().text()).toBe(200);
  return postedForm(await res.text());
}

/** Checks a posted form is a signed RequestDenied SAML response to the request, with its RelayState and reason. */
async function expectRequestDenied(tenant: string, form: { action: string; fields: Record<string, string> }, inResponseTo: string, relayState: string, reason: string) {
  expect(form.action).toBe(ACS);
  expect(Object.keys(form.fields).sort()).toEqual(["RelayState", "SAMLResponse"]);
  expect(form.fields.RelayState).toBe(relayState);
  const saml = readResponse(form.fields.SAMLResponse ?? "");
  expect(saml.attr(saml.root, "InResponseTo")).toBe(inResponseTo);
  expect(saml.find("Assertion")).toBeUndefined();
  expect(saml.xml).toContain(`<samlp:StatusCode Value="${RESPONDER}"><samlp:StatusCode Value="${REQUEST_DENIED}">`);
  expect(saml.text("StatusMessage")).toContain(reason);
  const [current] = (await listKeys(tenant)).filter((k) => k.current && k.alg === "RS256");
  expect(await verifyEnveloped(saml.root, saml.root, await importX509(current?.cert ?? "", "RS256"))).toBe(true);
}

const attributeValues = (xml: string, name: string) =>
  [...xml.matchAll(new RegExp(`<saml:Attribute Name="${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}"[^>]*>(.*?)</saml:Attribute>`, "g"))].flatMap((m) =>
    [...(m[1] ?? "").matchAll(/<saml:AttributeValue[^>]*>([^<]*)<\/saml:AttributeValue>/g)].map((v) => v[1]),
  );

describe("post-login actions on SAML logins", () => {
  it("regression: a deny is enforced on an SSO login too, and the SP gets a RequestDenied SAMLResponse, not an assertion", async () => {
    const { tenant, app, email } = await setup();
    const { form, cookie } = await interactiveLogin(tenant, app.client_id, email);
    expect(readResponse(form.fields.SAMLResponse ?? "").find("Assertion")).toBeDefined();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.access.deny("Weekdays only"); };`);
    const denied = await ssoLogin(tenant, app.client_id, cookie ?? "", "_sso_2", "after-deny");
    await expectRequestDenied(tenant, denied, "_sso_2", "after-deny", "Weekdays only");
  });

  it("a deny on the interactive login answers the SP a RequestDenied SAMLResponse with InResponseTo and RelayState, no error= field", async () => {
    const { tenant, app, email } = await setup();
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.access.deny("Not today"); };`);
    const { form } = await interactiveLogin(tenant, app.client_id, email, "_interactive", "rs/denied");
    expect(form.fields.error).toBeUndefined();
    await expectRequestDenied(tenant, form, "_interactive", "rs/denied", "Not today");
  });

  it("actions see event.transaction.protocol 'samlp' on interactive and SSO logins", async () => {
    const { tenant, app, email, user } = await setup();
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        api.user.setAppMetadata("protocols", [...(event.user.app_metadata.protocols || []), event.transaction.protocol]);
      };`,
    );
    const { form, cookie } = await interactiveLogin(tenant, app.client_id, email);
    expect(readResponse(form.fields.SAMLResponse ?? "").find("Assertion")).toBeDefined();
    const sso = await ssoLogin(tenant, app.client_id, cookie ?? "", "_sso", "r");
    expect(readResponse(sso.fields.SAMLResponse ?? "").find("Assertion")).toBeDefined();
    const stored = (await (await onTenant(tenant, "GET", `/users/${encodeURIComponent(user.user_id)}`)).json()) as { app_metadata: { protocols?: string[] } };
    expect(stored.app_metadata.protocols).toEqual(["samlp", "samlp"]);
  });
});

describe("the organization rule on SAML logins", () => {
  it("regression: an SSO login to an application that requires an organization is refused with RequestDenied, not answered with an assertion", async () => {
    const { tenant, app, email } = await setup();
    const orgApp = await samlApp(tenant, {}, { organization_usage: "require", organization_require_behavior: "no_prompt" });
    const { cookie } = await interactiveLogin(tenant, app.client_id, email);
    const refused = await ssoLogin(tenant, orgApp.client_id, cookie ?? "", "_org_sso", "org-rs");
    await expectRequestDenied(tenant, refused, "_org_sso", "org-rs", "parameter organization is required for this client");
  });
});

describe("the SAML profile", () => {
  it("releases given_name and family_name under the default mappings, and a dotted mapping emits the metadata value it names", async () => {
    const { tenant, app, email, user } = await setup({
      mappings: { "user_metadata.plan": "http://example.com/plan", "app_metadata.tier": "tier", "user_metadata.missing": "http://example.com/missing" },
    });
    const patched = await onTenant(tenant, "PATCH", `/users/${encodeURIComponent(user.user_id)}`, {
      given_name: "Ada",
      family_name: "Lovelace",
      user_metadata: { plan: "gold" },
      app_metadata: { tier: 3 },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const { form } = await interactiveLogin(tenant, app.client_id, email);
    const { xml } = readResponse(form.fields.SAMLResponse ?? "");
    expect(attributeValues(xml, "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname")).toEqual(["Ada"]);
    expect(attributeValues(xml, "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname")).toEqual(["Lovelace"]);
    expect(attributeValues(xml, "http://example.com/plan")).toEqual(["gold"]);
    expect(attributeValues(xml, "tier")).toEqual(["3"]);
    // An absent value makes no attribute; metadata objects never pass through unmapped.
    expect(xml).not.toContain("http://example.com/missing");
    expect(xml).not.toContain("http://schemas.auth0.com/user_metadata");
    expect(xml).not.toContain("http://schemas.auth0.com/app_metadata");
    expect(xml).not.toContain("[object Object]");
  });

  it("a user without given_name or family_name gets no givenname or surname attribute", async () => {
    const { tenant, app, email } = await setup();
    const { form } = await interactiveLogin(tenant, app.client_id, email);
    const { xml } = readResponse(form.fields.SAMLResponse ?? "");
    expect(xml).not.toContain("identity/claims/givenname");
    expect(xml).not.toContain("identity/claims/surname");
    expect(attributeValues(xml, "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress")).toEqual([email]);
  });
});
