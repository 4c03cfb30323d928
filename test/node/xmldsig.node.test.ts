import { deflateRawSync } from "node:zlib";
import { DOMParser } from "@xmldom/xmldom";
import { generateKeyPair, exportJWK } from "jose";
import { ExclusiveCanonicalization, SignedXml } from "xml-crypto";
import { describe, expect, it } from "vitest";
import { issueCertificate, type PrivateJwk, pem } from "../../src/shared/crypto/x509";
import { decodeSamlRequest, parseAuthnRequest, SamlRequestError } from "../../src/shared/saml/authn-request";
import { CLAIMS, NAME_ID_FORMATS } from "../../src/shared/saml/constants";
import { idpMetadata } from "../../src/shared/saml/metadata";
import { buildSignedResponse, buildStatusResponse, type SamlResponseInput } from "../../src/shared/saml/response";
import { verifyPostSignature } from "../../src/shared/saml/request-signature";
import { importRsaSigningKey, type XmlSigner } from "../../src/shared/saml/xmldsig";
import { excC14n } from "../../src/shared/xml/c14n";
import { parseXml, XmlParseError } from "../../src/shared/xml/parse";
import { serialize } from "../../src/shared/xml/tree";

/**
 * The XML signer and canonicalizer checked in Node against an independent implementation: xml-crypto (a
 * devDependency only) verifies every signature Gatehouse produces and canonicalizes the same documents.
 */

async function signer(signatureAlgorithm: XmlSigner["signatureAlgorithm"] = "rsa-sha256", digestAlgorithm: XmlSigner["digestAlgorithm"] = "sha256") {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const jwk = (await exportJWK(privateKey)) as PrivateJwk;
  const der = await issueCertificate(jwk, { commonName: "idp.test", notBefore: Date.now() - 1000, notAfter: Date.now() + 86_400_000 });
  const certPem = pem("CERTIFICATE", der);
  const certificate = Buffer.from(der).toString("base64");
  const key = await importRsaSigningKey(jwk, signatureAlgorithm === "rsa-sha1" ? "SHA-1" : "SHA-256");
  return { signer: { key, certificate, signatureAlgorithm, digestAlgorithm } satisfies XmlSigner, certPem };
}

function input(overrides: Partial<SamlResponseInput> = {}): SamlResponseInput {
  const now = Date.now();
  return {
    issuer: "urn:acme.localhost",
    destination: "https://sp.example.com/acs",
    recipient: "https://sp.example.com/acs",
    audience: "urn:sp.example.com",
    inResponseTo: "_req1",
    nameId: { value: "ada@example.com", format: NAME_ID_FORMATS.emailAddress },
    sessionIndex: "ses_1",
    authnInstant: now - 5000,
    now,
    lifetimeS: 3600,
    authnContextClassRef: "urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified",
    attributes: [
      { name: CLAIMS.email, values: ["ada@example.com"] },
      { name: CLAIMS.name, values: ["Ada <Lovelace> & \"Co\"\r\n\tÉ 😀"] },
      { name: "http://schemas.auth0.com/email_verified", values: [true] },
      { name: CLAIMS.groups, values: ["a", "b"] },
    ],
    typedAttributes: true,
    includeAttributeNameFormat: true,
    signResponse: false,
    ...overrides,
  };
}

/** Verifies every ds:Signature of a document with xml-crypto, against the given certificate. */
function verifyAll(xml: string, certPem: string): string[] {
  const doc = new DOMParser().parseFromString(xml, "text/xml");
  const signatures = Array.from(doc.getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "Signature"));
  expect(signatures.length).toBeGreaterThan(0);
  return signatures.map((node) => {
    const sig = new SignedXml({ publicCert: certPem });
    sig.loadSignature(node as unknown as Node);
    const ok = sig.checkSignature(xml);
    expect(ok).toBe(true);
    return String((node.parentNode as unknown as Element).localName);
  });
}

describe("enveloped signatures verified by xml-crypto", () => {
  it("a signed assertion verifies (rsa-sha256, sha256), with odd characters in attribute values", async () => {
    const { signer: s, certPem } = await signer();
    const xml = serialize(await buildSignedResponse(input(), s));
    expect(verifyAll(xml, certPem)).toEqual(["Assertion"]);
    expect(xml).toContain("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
  });

  it("signResponse signs the Response over the signed assertion; both verify", async () => {
    const { signer: s, certPem } = await signer();
    const xml = serialize(await buildSignedResponse(input({ signResponse: true }), s));
    expect(verifyAll(xml, certPem).sort()).toEqual(["Assertion", "Response"]);
  });

  it("the legacy rsa-sha1/sha1 pair verifies too", async () => {
    const { signer: s, certPem } = await signer("rsa-sha1", "sha1");
    const xml = serialize(await buildSignedResponse(input({ typedAttributes: false, includeAttributeNameFormat: false }), s));
    expect(verifyAll(xml, certPem)).toEqual(["Assertion"]);
    expect(xml).toContain("http://www.w3.org/2000/09/xmldsig#rsa-sha1");
  });

  it("a status-only response (NoPassive) is signed and verifies", async () => {
    const { signer: s, certPem } = await signer();
    const status = { code: "urn:oasis:names:tc:SAML:2.0:status:Responder", subcode: "urn:oasis:names:tc:SAML:2.0:status:NoPassive", message: "not logged in" };
    const xml = serialize(await buildStatusResponse({ issuer: "urn:idp", destination: "https://sp.example.com/acs", inResponseTo: "_r", now: Date.now() }, status, s));
    expect(verifyAll(xml, certPem)).toEqual(["Response"]);
  });

  it("a tampered assertion no longer verifies", async () => {
    const { signer: s, certPem } = await signer();
    const xml = serialize(await buildSignedResponse(input(), s)).replace("ada@example.com</saml:NameID>", "eve@example.com</saml:NameID>");
    const doc = new DOMParser().parseFromString(xml, "text/xml");
    const node = doc.getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "Signature")[0];
    const sig = new SignedXml({ publicCert: certPem });
    sig.loadSignature(node as unknown as Node);
    let verified: boolean;
    try {
      verified = sig.checkSignature(xml);
    } catch {
      verified = false;
    }
    expect(verified).toBe(false);
  });
});

describe("exclusive canonicalization matches xml-crypto's", () => {
  const documents = [
    '<a:root xmlns:a="urn:a" xmlns:b="urn:b" xmlns:unused="urn:u" z="1" b:y="2" a="3"><b:child xmlns:a="urn:a">text &amp; &lt;more&gt;</b:child><empty/></a:root>',
    '<root xmlns="urn:default"><leaf attr="tab&#9;nl&#10;cr&#13;q&quot;&lt;&gt;"/><x:leaf xmlns:x="urn:x" xmlns="urn:default">a&#13;b</x:leaf></root>',
    '<p:x xmlns:p="urn:p"><p:y xmlns:p="urn:other" p:k="v"/><q:z xmlns:q="urn:q">a\r\nb</q:z></p:x>',
  ];
  for (const [i, text] of documents.entries()) {
    it(`document ${i + 1}`, () => {
      const ours = excC14n(parseXml(text));
      const doc = new DOMParser().parseFromString(text, "text/xml");
      const theirs = new ExclusiveCanonicalization().process(doc.documentElement as unknown as Node, {}).toString();
      expect(ours, theirs).toBe(theirs);
    });
  }
});

describe("AuthnRequest decoding", () => {
  const request = (extra = "") =>
    `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_abc123" Version="2.0" IssueInstant="2026-01-01T00:00:00Z" AssertionConsumerServiceURL="https://sp.example.com/acs" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"${extra}><saml:Issuer>urn:sp.example.com</saml:Issuer><samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" AllowCreate="true"/></samlp:AuthnRequest>`;

  it("reads the redirect binding (deflated) and the POST binding (plain)", async () => {
    const deflated = deflateRawSync(Buffer.from(request())).toString("base64");
    const plain = Buffer.from(request(' ForceAuthn="true"')).toString("base64");
    const a = parseAuthnRequest(await decodeSamlRequest(deflated));
    expect(a).toMatchObject({ id: "_abc123", issuer: "urn:sp.example.com", assertionConsumerServiceUrl: "https://sp.example.com/acs", forceAuthn: false, nameIdFormat: NAME_ID_FORMATS.emailAddress });
    expect(parseAuthnRequest(await decodeSamlRequest(plain)).forceAuthn).toBe(true);
  });

  it("refuses DTDs, entities, deflate bombs and other roots", async () => {
    const doctype = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]>${request()}`;
    await expect(decodeSamlRequest(Buffer.from(doctype).toString("base64")).then(parseAuthnRequest)).rejects.toThrow(SamlRequestError);
    expect(() => parseXml("<a>&e;</a>")).toThrow(XmlParseError);
    const bomb = deflateRawSync(Buffer.alloc(10_000_000, 0x20)).toString("base64");
    await expect(decodeSamlRequest(bomb)).rejects.toThrow(/inflates to more than/);
    await expect(decodeSamlRequest("not base64!")).rejects.toThrow(SamlRequestError);
    expect(() => parseAuthnRequest('<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0"/>')).toThrow(/not an AuthnRequest/);
    expect(() => parseAuthnRequest(request().replace('Version="2.0"', 'Version="1.1"'))).toThrow(/Version/);
    expect(() => parseAuthnRequest(request().replace('ID="_abc123"', 'ID="1bad"'))).toThrow(/ID/);
  });
});

describe("IdP metadata", () => {
  it("parses, names the entity, both bindings and one signing KeyDescriptor per certificate", () => {
    const xml = idpMetadata({ entityId: "urn:acme.localhost", ssoUrl: "http://acme.localhost/samlp/c1", certificates: ["AAAA", "BBBB"] });
    const doc = new DOMParser().parseFromString(xml, "text/xml");
    const md = "urn:oasis:names:tc:SAML:2.0:metadata";
    expect(doc.documentElement?.getAttribute("entityID")).toBe("urn:acme.localhost");
    const sso = Array.from(doc.getElementsByTagNameNS(md, "SingleSignOnService")).map((e) => e.getAttribute("Binding"));
    expect(sso).toEqual(["urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"]);
    const certs = Array.from(doc.getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "X509Certificate")).map((e) => e.textContent);
    expect(certs).toEqual(["AAAA", "BBBB"]);
  });
});

describe("signed AuthnRequests (HTTP-POST) signed by xml-crypto verify with our verifier", () => {
  const request = (id = "_signed1") =>
    `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="2026-01-01T00:00:00Z" AssertionConsumerServiceURL="https://sp.example.com/acs?a=1&amp;b=2" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">\n  <saml:Issuer>urn:sp.example.com</saml:Issuer>\n  <samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" AllowCreate="true"/>\n</samlp:AuthnRequest>`;

  async function spSign(xml: string, signatureAlgorithm: string, digestAlgorithm: string, prefixes?: { signedInfo: string[]; reference: string[] }) {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
    const jwk = (await exportJWK(privateKey)) as PrivateJwk;
    const certPem = pem("CERTIFICATE", await issueCertificate(jwk, { commonName: "sp.test", notBefore: Date.now() - 1000, notAfter: Date.now() + 86_400_000 }));
    const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", privateKey)).toString("base64");
    const sig = new SignedXml({
      privateKey: `-----BEGIN PRIVATE KEY-----\n${pkcs8}\n-----END PRIVATE KEY-----\n`,
      publicCert: certPem,
      canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
      signatureAlgorithm,
      ...(prefixes ? { inclusiveNamespacesPrefixList: prefixes.signedInfo } : {}),
    });
    sig.addReference({
      xpath: "/*",
      transforms: ["http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"],
      digestAlgorithm,
      ...(prefixes ? { inclusiveNamespacesPrefixList: prefixes.reference } : {}),
    });
    sig.computeSignature(xml, { location: { reference: "/*/*[local-name()='Issuer']", action: "after" } });
    return { signed: sig.getSignedXml(), certPem };
  }

  it("rsa-sha256/sha256 and rsa-sha1/sha1 verify; a changed field or another certificate does not", async () => {
    for (const [alg, digest] of [
      ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2001/04/xmlenc#sha256"],
      ["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1"],
    ] as const) {
      const { signed, certPem } = await spSign(request(), alg, digest);
      expect(signed).toContain("<Signature");
      expect(parseAuthnRequest(signed).id).toBe("_signed1");
      expect(await verifyPostSignature(signed, certPem)).toEqual({ ok: true });
      const tampered = signed.replace("https://sp.example.com/acs?a=1", "https://sp.example.com/acs?a=9");
      expect(await verifyPostSignature(tampered, certPem)).toMatchObject({ ok: false, code: "INVALID_SIGNATURE" });
      const other = await spSign(request(), alg, digest);
      expect(await verifyPostSignature(signed, other.certPem)).toMatchObject({ ok: false, code: "INVALID_SIGNATURE" });
    }
  });

  it("an InclusiveNamespaces PrefixList (on the reference and on SignedInfo) is honoured, not ignored", async () => {
    // Declared but not visibly used: exclusive C14N drops xs and xsi unless the PrefixList names them.
    const xml = request("_incl1").replace(
      'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"',
      'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"',
    );
    const { signed, certPem } = await spSign(xml, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2001/04/xmlenc#sha256", {
      signedInfo: ["xs", "samlp"],
      reference: ["xs", "xsi", "#default"],
    });
    expect(signed).toContain("InclusiveNamespaces");
    expect(await verifyPostSignature(signed, certPem)).toEqual({ ok: true });
    // The canonical form with the list keeps the declarations it names.
    const root = parseXml(xml);
    expect(excC14n(root, undefined, ["xs"])).toContain('xmlns:xs="http://www.w3.org/2001/XMLSchema"');
    expect(excC14n(root)).not.toContain("xmlns:xs");
    // A PrefixList changed after signing no longer verifies (the list is part of what is signed).
    const edited = signed.replace(/PrefixList="xs xsi #default"/, 'PrefixList="xs #default"');
    expect(edited).not.toBe(signed);
    expect(await verifyPostSignature(edited, certPem)).toMatchObject({ ok: false, code: "INVALID_SIGNATURE" });
    // Any other child of a transform is still refused as unsupported.
    const odd = signed.replace(/<(\w+:)?InclusiveNamespaces[^>]*\/>/, '<ec:Other xmlns:ec="urn:other"/>');
    expect(odd).not.toBe(signed);
    expect(await verifyPostSignature(odd, certPem)).toMatchObject({ ok: false });
  });
});
