import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { onTenant } from "../helpers/keys";
import {
  ACS,
  authnRequest,
  deflated,
  logIn,
  plainBase64,
  postedForm,
  RSA_SHA1,
  RSA_SHA256,
  readResponse,
  SP_ENTITY,
  signedRedirectQuery,
  ssoPost,
  ssoRawQuery,
  ssoRedirect,
} from "../helpers/saml";
import { issueCertificate, type PrivateJwk, pem } from "../../src/shared/crypto/x509";
import { afterChild, importRsaSigningKey, signEnveloped } from "../../src/shared/saml/xmldsig";
import { parseXml } from "../../src/shared/xml/parse";
import { serialize } from "../../src/shared/xml/tree";

/**
 * Signed AuthnRequests (`addons.samlp.signingCert`, the reference platform's "require signed requests"):
 * with a certificate set, /samlp/{client_id} accepts only requests signed by its key, over the
 * HTTP-Redirect binding (query signature) and the HTTP-POST binding (enveloped XML signature); without one,
 * unsigned requests are accepted as before.
 */

const PASSWORD = "p4ssw0rd!";
const errorCode = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** An SP key pair and its self-signed certificate (PEM and bare base64 DER). */
async function spKeys(kind: "RSA" | "EC" = "RSA") {
  const algorithm =
    kind === "RSA"
      ? { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1), hash: "SHA-256" }
      : { name: "ECDSA", namedCurve: "P-256" };
  const pair = (await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as PrivateJwk;
  const der = await issueCertificate(jwk, { commonName: "sp.example.com", notBefore: Date.now() - 1000, notAfter: Date.now() + 86_400_000 });
  return { privateKey: pair.privateKey, jwk, der, certPem: pem("CERTIFICATE", der), certBase64: b64(der) };
}

async function setup(samlp: Record<string, unknown> = {}) {
  const tenant = await createTenant();
  const email = `u-${crypto.randomUUID().slice(0, 6)}@example.com`;
  await seedUser(tenant, email, PASSWORD);
  const sp = await spKeys();
  const res = await onTenant(tenant, "POST", "/clients", { name: "SP app", callbacks: [ACS], addons: { samlp: { signingCert: sp.certPem, ...samlp } } });
  expect(res.status, await res.clone().text()).toBe(201);
  const app = (await res.json()) as { client_id: string };
  return { tenant, email, sp, app };
}

async function expectRefused(res: Response, code: string, message?: string) {
  const body = await res.text();
  expect(res.status, body).toBe(400);
  expect(errorCode(body)).toBe(code);
  if (message) expect(body).toContain(message);
  expect(body).not.toContain("SAMLResponse");
}

/** An AuthnRequest document with an enveloped signature by `jwk` (the repo's XML signer). */
async function signedPostRequest(jwk: PrivateJwk, certBase64: string, xml = authnRequest()) {
  const root = parseXml(xml);
  const signer = { key: await importRsaSigningKey(jwk, "SHA-256"), certificate: certBase64, signatureAlgorithm: "rsa-sha256", digestAlgorithm: "sha256" } as const;
  await signEnveloped(root, root, signer, afterChild(root, "Issuer"));
  return serialize(root);
}

describe("HTTP-Redirect binding with signingCert", () => {
  it("a correctly signed request reaches the login page and completes with the SAML response and its RelayState", async () => {
    const { tenant, email, sp, app } = await setup();
    const query = await signedRedirectQuery(sp.privateKey, { samlRequest: await deflated(authnRequest()), relayState: "deep/link?a=1&b=é" });
    const start = await ssoRawQuery(tenant, app.client_id, query);
    expect(start.status, await start.clone().text()).toBe(302);
    const location = start.headers.get("location") ?? "";
    expect(location).toMatch(/^\/u2\/login\?state=ls_/);
    const { res } = await logIn(tenant, location, email, PASSWORD);
    expect(res.status).toBe(200);
    const { action, fields } = postedForm(await res.text());
    expect(action).toBe(ACS);
    expect(fields.RelayState).toBe("deep/link?a=1&b=é");
    const saml = readResponse(fields.SAMLResponse ?? "");
    expect(saml.attr(saml.root, "InResponseTo")).toBe("_req_1");
    expect(saml.text("Audience")).toBe(SP_ENTITY);
  });

  it("without RelayState, with rsa-sha1, and with the certificate as bare base64 DER: accepted", async () => {
    const { tenant, sp, app } = await setup();
    const samlRequest = await deflated(authnRequest());
    const noRelay = await ssoRawQuery(tenant, app.client_id, await signedRedirectQuery(sp.privateKey, { samlRequest }));
    expect(noRelay.status, await noRelay.clone().text()).toBe(302);
    const sha1Key = await importRsaSigningKey(sp.jwk, "SHA-1");
    const sha1 = await ssoRawQuery(tenant, app.client_id, await signedRedirectQuery(sha1Key, { samlRequest, relayState: "x", sigAlg: RSA_SHA1 }));
    expect(sha1.status, await sha1.clone().text()).toBe(302);

    const patched = await onTenant(tenant, "PATCH", `/clients/${app.client_id}`, { addons: { samlp: { signingCert: sp.certBase64 } } });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const bare = await ssoRawQuery(tenant, app.client_id, await signedRedirectQuery(sp.privateKey, { samlRequest, relayState: "x" }));
    expect(bare.status, await bare.clone().text()).toBe(302);
  });

  it("an unsigned request is refused: the AuthnRequest must be signed", async () => {
    const { tenant, app } = await setup();
    const samlRequest = await deflated(authnRequest());
    await expectRefused(await ssoRedirect(tenant, app.client_id, { SAMLRequest: samlRequest, RelayState: "x" }), "SIGNATURE_REQUIRED", "The AuthnRequest must be signed");
    // A signature without its algorithm, or an algorithm without a signature, is no signature either.
    const signed = await signedRedirectQuery((await spKeys()).privateKey, { samlRequest });
    await expectRefused(await ssoRawQuery(tenant, app.client_id, signed.replace(/&SigAlg=[^&]*/, "")), "SIGNATURE_REQUIRED");
    await expectRefused(await ssoRawQuery(tenant, app.client_id, signed.replace(/&Signature=[^&]*/, "")), "SIGNATURE_REQUIRED");
  });

  it("a request signed by another key is refused: the signature is not valid", async () => {
    const { tenant, app } = await setup();
    const other = await spKeys();
    const query = await signedRedirectQuery(other.privateKey, { samlRequest: await deflated(authnRequest()), relayState: "x" });
    await expectRefused(await ssoRawQuery(tenant, app.client_id, query), "INVALID_SIGNATURE", "The AuthnRequest signature is not valid");
  });

  it("a tampered RelayState, SAMLRequest or Signature is refused", async () => {
    const { tenant, sp, app } = await setup();
    const query = await signedRedirectQuery(sp.privateKey, { samlRequest: await deflated(authnRequest()), relayState: "original" });
    const cases = [
      query.replace("RelayState=original", "RelayState=tampered"),
      // RelayState dropped, or added to a request signed without one.
      query.replace("&RelayState=original", ""),
      `${await signedRedirectQuery(sp.privateKey, { samlRequest: await deflated(authnRequest()) })}&RelayState=added`,
      query.replace(/^SAMLRequest=[^&]*/, `SAMLRequest=${encodeURIComponent(await deflated(authnRequest({ id: "_forged" })))}`),
      query.replace(/Signature=[^&]*$/, `Signature=${encodeURIComponent(btoa("not a signature"))}`),
      query.replace(/Signature=[^&]*$/, "Signature=%%%"),
    ];
    for (const tampered of cases) await expectRefused(await ssoRawQuery(tenant, app.client_id, tampered), "INVALID_SIGNATURE");
    // Repeating a signed parameter is refused too.
    expect((await ssoRawQuery(tenant, app.client_id, `${query}&Signature=AAAA`)).status).toBe(400);
    expect((await ssoRawQuery(tenant, app.client_id, `${query}&SigAlg=${encodeURIComponent(RSA_SHA256)}`)).status).toBe(400);
  });

  it("an unsupported SigAlg is refused, even when the signature matches", async () => {
    const { tenant, sp, app } = await setup();
    const samlRequest = await deflated(authnRequest());
    for (const sigAlg of ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha512", "http://www.w3.org/2001/04/xmldsig-more#hmac-sha256", "none"]) {
      const query = await signedRedirectQuery(sp.privateKey, { samlRequest, relayState: "x", sigAlg });
      await expectRefused(await ssoRawQuery(tenant, app.client_id, query), "UNSUPPORTED_SIGNATURE_ALGORITHM", "signature algorithm is not supported");
    }
  });

  it("IdP-initiated login (no SAMLRequest) stays governed by allowIdpInitiated", async () => {
    const { tenant, app } = await setup({ allowIdpInitiated: true, recipient: ACS });
    expect((await ssoRedirect(tenant, app.client_id, { RelayState: "x" })).status).toBe(302);
    const { tenant: t2, app: off } = await setup();
    const refused = await ssoRedirect(t2, off.client_id, {});
    expect(errorCode(await refused.text())).toBe("IDP_INITIATED_DISABLED");
  });
});

describe("HTTP-POST binding with signingCert", () => {
  it("an enveloped signature by the SP's key is accepted; unsigned, tampered or foreign ones are refused", async () => {
    const { tenant, sp, app } = await setup();
    const signed = await signedPostRequest(sp.jwk, sp.certBase64);
    const ok = await ssoPost(tenant, app.client_id, { SAMLRequest: plainBase64(signed), RelayState: "x" });
    expect(ok.status, await ok.clone().text()).toBe(302);
    expect(ok.headers.get("location") ?? "").toMatch(/^\/u2\/login\?state=ls_/);

    await expectRefused(await ssoPost(tenant, app.client_id, { SAMLRequest: plainBase64(authnRequest()) }), "SIGNATURE_REQUIRED", "The AuthnRequest must be signed");
    const tampered = signed.replace(`>${SP_ENTITY}<`, ">urn:evil.example.com<");
    expect(tampered).not.toBe(signed);
    await expectRefused(await ssoPost(tenant, app.client_id, { SAMLRequest: plainBase64(tampered) }), "INVALID_SIGNATURE");
    const other = await spKeys();
    const foreign = await signedPostRequest(other.jwk, other.certBase64);
    await expectRefused(await ssoPost(tenant, app.client_id, { SAMLRequest: plainBase64(foreign) }), "INVALID_SIGNATURE", "The AuthnRequest signature is not valid");
    // A query signature does not stand in for the enveloped one in the POST binding.
    await expectRefused(await ssoPost(tenant, app.client_id, { SAMLRequest: plainBase64(authnRequest()), SigAlg: RSA_SHA256, Signature: "AAAA" }), "SIGNATURE_REQUIRED");
  });
});

describe("applications without signingCert", () => {
  it("accept unsigned requests over both bindings, as before", async () => {
    const tenant = await createTenant();
    const res = await onTenant(tenant, "POST", "/clients", { name: "SP app", callbacks: [ACS], addons: { samlp: {} } });
    const { client_id } = (await res.json()) as { client_id: string };
    expect((await ssoRedirect(tenant, client_id, { SAMLRequest: await deflated(authnRequest()), RelayState: "x" })).status).toBe(302);
    expect((await ssoPost(tenant, client_id, { SAMLRequest: plainBase64(authnRequest()) })).status).toBe(302);
  });
});

describe("signingCert on clients", () => {
  it("is stored as given; a value that is not an RSA X.509 certificate is 400", async () => {
    const tenant = await createTenant();
    const sp = await spKeys();
    const created = await onTenant(tenant, "POST", "/clients", { name: "SP app", callbacks: [ACS], addons: { samlp: { signingCert: sp.certPem } } });
    expect(created.status).toBe(201);
    const app = (await created.json()) as { client_id: string; addons: { samlp: { signingCert: string } } };
    expect(app.addons.samlp.signingCert).toBe(sp.certPem);
    const ec = await spKeys("EC");
    const bad = [
      "not a certificate",
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
      sp.certBase64.slice(0, 200),
      btoa("garbage that is base64"),
      ec.certPem,
      `${sp.certPem}trailing`,
      "",
      42,
    ];
    for (const signingCert of bad) {
      const res = await onTenant(tenant, "PATCH", `/clients/${app.client_id}`, { addons: { samlp: { signingCert } } });
      expect(res.status, String(signingCert).slice(0, 40)).toBe(400);
    }
  });
});
