import { env } from "cloudflare:test";
import { excC14n } from "../../src/shared/xml/c14n";
import { parseXml } from "../../src/shared/xml/parse";
import { EMPTY_SCOPE, type Scope, scopeOf, textOf, type XmlElement, localOf } from "../../src/shared/xml/tree";
import { expect } from "vitest";
import { call, createTenant } from "./api";
import { seedUser } from "./flows";
import { hostOf, onTenant } from "./keys";

/** SAML test plumbing: deflated AuthnRequests, the login through /u2, and reading the posted response. */

export const ACS = "https://sp.example.com/saml/acs";
export const SP_ENTITY = "urn:sp.example.com";

export function authnRequest(fields: { id?: string; acs?: string | null; extra?: string; issuer?: string } = {}): string {
  const acs = fields.acs === null ? "" : ` AssertionConsumerServiceURL="${fields.acs ?? ACS}"`;
  return `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${fields.id ?? "_req_1"}" Version="2.0" IssueInstant="${new Date().toISOString()}"${acs} ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"${fields.extra ?? ""}><saml:Issuer>${fields.issuer ?? SP_ENTITY}</saml:Issuer></samlp:AuthnRequest>`;
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** HTTP-Redirect binding: raw DEFLATE, then base64. */
export async function deflated(xml: string): Promise<string> {
  const stream = new Blob([new TextEncoder().encode(xml)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return b64(new Uint8Array(await new Response(stream).arrayBuffer()));
}

export const plainBase64 = (xml: string) => b64(new TextEncoder().encode(xml));

/** GET /samlp/{client_id} with query parameters (HTTP-Redirect), not following redirects. */
export function ssoRedirect(tenant: string, clientId: string, params: Record<string, string>, cookie?: string) {
  const query = new URLSearchParams(params).toString();
  return call(`/samlp/${clientId}${query ? `?${query}` : ""}`, { host: hostOf(tenant), redirect: "manual", headers: cookie ? { cookie } : {} });
}

/** GET /samlp/{client_id}?{rawQuery}: the query sent byte for byte (signed redirect requests). */
export function ssoRawQuery(tenant: string, clientId: string, rawQuery: string) {
  return call(`/samlp/${clientId}?${rawQuery}`, { host: hostOf(tenant), redirect: "manual" });
}

export const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
export const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";

/**
 * An SP's signed HTTP-Redirect query (saml-bindings-2.0-os §3.4.4.1): `SAMLRequest`, `RelayState` when
 * given and `SigAlg`, URL-encoded, then `Signature` over exactly those octets with the RSA private key.
 */
export async function signedRedirectQuery(
  privateKey: CryptoKey,
  fields: { samlRequest: string; relayState?: string; sigAlg?: string },
): Promise<string> {
  const sigAlg = fields.sigAlg ?? RSA_SHA256;
  const signed = [
    `SAMLRequest=${encodeURIComponent(fields.samlRequest)}`,
    ...(fields.relayState !== undefined ? [`RelayState=${encodeURIComponent(fields.relayState)}`] : []),
    `SigAlg=${encodeURIComponent(sigAlg)}`,
  ].join("&");
  const signature = new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", privateKey, new TextEncoder().encode(signed)));
  return `${signed}&Signature=${encodeURIComponent(b64(signature))}`;
}

/** POST /samlp/{client_id} (HTTP-POST binding). */
export function ssoPost(tenant: string, clientId: string, params: Record<string, string>, cookie?: string) {
  return call(`/samlp/${clientId}`, {
    method: "POST",
    host: hostOf(tenant),
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(params).toString(),
  });
}

/** Follows /u2/login?state=... with the user's password; answers the final response and the session cookie. */
export async function logIn(tenant: string, loginLocation: string, email: string, password: string) {
  const state = new URL(loginLocation, "http://x").searchParams.get("state") ?? "";
  const session = await env.TENANT.getByName(tenant).logins().get(state);
  if (!session) throw new Error(`no login session ${state}`);
  const res = await call(`/u2/login?state=${state}`, {
    method: "POST",
    host: hostOf(tenant),
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `gh_csrf=${session.csrf_token}` },
    body: new URLSearchParams({ _csrf: session.csrf_token, email, password }).toString(),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("gh_session="))?.split(";")[0];
  return { res, cookie };
}

const decodeEntities = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** The auto-submitting form: where it posts and its fields. */
export function postedForm(html: string): { action: string; fields: Record<string, string> } {
  const action = decodeEntities(/<form method="post" action="([^"]*)"/.exec(html)?.[1] ?? "");
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[m[1] ?? ""] = decodeEntities(m[2] ?? "");
  return { action, fields };
}

/** A parsed SAMLResponse with a few lookups. */
export function readResponse(samlResponse: string) {
  const xml = new TextDecoder().decode(Uint8Array.from(atob(samlResponse), (c) => c.charCodeAt(0)));
  const root = parseXml(xml);
  const find = (node: XmlElement, local: string): XmlElement | undefined => {
    for (const child of node.children) {
      if (typeof child === "string") continue;
      if (localOf(child.name) === local) return child;
      const deeper = find(child, local);
      if (deeper) return deeper;
    }
    return undefined;
  };
  const attr = (node: XmlElement | undefined, name: string) => node?.attrs.find(([n]) => n === name)?.[1];
  return { xml, root, find: (local: string) => find(root, local), attr, text: (local: string) => {
    const node = find(root, local);
    return node ? textOf(node) : undefined;
  } };
}

function scopeAt(node: XmlElement, target: XmlElement, scope: Scope = EMPTY_SCOPE): Scope | null {
  if (node === target) return scope;
  for (const child of node.children) {
    if (typeof child === "string") continue;
    const found = scopeAt(child, target, scopeOf(node, scope));
    if (found) return found;
  }
  return null;
}

/**
 * Checks one enveloped signature of the parsed document with WebCrypto against a certificate's public
 * key (the Node suite checks the same documents with xml-crypto, an independent verifier).
 */
export async function verifyEnveloped(root: XmlElement, signed: XmlElement, publicKey: CryptoKey): Promise<boolean> {
  const signature = signed.children.find((c): c is XmlElement => typeof c !== "string" && localOf(c.name) === "Signature");
  if (!signature) return false;
  const signedInfo = signature.children.find((c): c is XmlElement => typeof c !== "string" && localOf(c.name) === "SignedInfo");
  const value = signature.children.find((c): c is XmlElement => typeof c !== "string" && localOf(c.name) === "SignatureValue");
  if (!signedInfo || !value) return false;
  const without: XmlElement = { ...signed, children: signed.children.filter((c) => c !== signature) };
  const scope = scopeAt(root, signed) ?? EMPTY_SCOPE;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(excC14n(without, scope))));
  const digestValue = /<ds:DigestValue>([^<]+)</.exec(excC14n(signedInfo))?.[1];
  if (digestValue !== b64(digest)) return false;
  const signatureBytes = Uint8Array.from(atob(textOf(value)), (c) => c.charCodeAt(0));
  const infoScope = scopeOf(signature, scopeOf(signed, scope));
  return crypto.subtle.verify("RSASSA-PKCS1-v1_5", publicKey, signatureBytes, new TextEncoder().encode(excC14n(signedInfo, infoScope)));
}

/** The password of the users `samlSetup` seeds. */
export const SAML_USER_PASSWORD = "p4ssw0rd!";

/** A SAML2 Web App (the client's `addons.samlp`) of the tenant, its ACS registered as a callback. */
export async function samlApp(tenant: string, samlp: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const res = await onTenant(tenant, "POST", "/clients", { name: "SP app", callbacks: [ACS], addons: { samlp }, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { client_id: string; addons: { samlp: Record<string, unknown> } };
}

/** A fresh tenant with a password user and a SAML app. */
export async function samlSetup(samlp: Record<string, unknown> = {}) {
  const tenant = await createTenant();
  const email = `u-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const user = await seedUser(tenant, email, SAML_USER_PASSWORD);
  const app = await samlApp(tenant, samlp);
  return { tenant, user, email, app };
}
