/**
 * Enveloped XML signatures (XML-DSig 1.1) over elements of documents Gatehouse builds itself: exclusive
 * C14N for both the reference and SignedInfo, RSA PKCS#1 v1.5 with SHA-256 (or SHA-1 when an application
 * asks for the reference platform's legacy `rsa-sha1`) through WebCrypto, so it runs in workerd with no
 * XML or crypto dependency. Why this is enough: the signer never has to canonicalize a document it did not
 * write, so the canonical form is computed from the same tree that is serialized (../xml/c14n.ts), and the
 * serializer writes that tree in canonical lexical form; a verifier that parses the document and
 * canonicalizes the referenced element gets the bytes that were digested.
 */
import { excC14n } from "../xml/c14n";
import { EMPTY_SCOPE, el, localOf, type Scope, scopeOf, type XmlElement } from "../xml/tree";

export const DSIG_NS = "http://www.w3.org/2000/09/xmldsig#";
export const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
export const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";

/** The reference platform's names (`addons.samlp.signatureAlgorithm` / `digestAlgorithm`) and their URIs. */
export const SIGNATURE_ALGORITHMS = {
  "rsa-sha256": { uri: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", hash: "SHA-256" },
  "rsa-sha1": { uri: "http://www.w3.org/2000/09/xmldsig#rsa-sha1", hash: "SHA-1" },
} as const;
export const DIGEST_ALGORITHMS = {
  sha256: { uri: "http://www.w3.org/2001/04/xmlenc#sha256", hash: "SHA-256" },
  sha1: { uri: "http://www.w3.org/2000/09/xmldsig#sha1", hash: "SHA-1" },
} as const;
export type SignatureAlgorithm = keyof typeof SIGNATURE_ALGORITHMS;
export type DigestAlgorithm = keyof typeof DIGEST_ALGORITHMS;

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** What signs: an RSA private key (imported once per key), its certificate, the algorithms. */
export interface XmlSigner {
  /** An RSA private key; its hash is chosen per signature (see importRsaSigningKey). */
  key: CryptoKey;
  /** The signing certificate, base64 DER (the X509Certificate of KeyInfo). */
  certificate: string;
  signatureAlgorithm: SignatureAlgorithm;
  digestAlgorithm: DigestAlgorithm;
}

/** Imports an RSA private JWK for XML signatures with the given hash (non-extractable). */
export function importRsaSigningKey(privateJwk: JsonWebKey, hash: "SHA-256" | "SHA-1"): Promise<CryptoKey> {
  const { alg: _alg, key_ops: _ops, use: _use, ...jwk } = privateJwk as JsonWebKey & { use?: string };
  return crypto.subtle.importKey("jwk", jwk, { name: "RSASSA-PKCS1-v1_5", hash }, false, ["sign"]);
}

/**
 * Signs `target` (an element of the document whose root is `root`, carrying an `ID` attribute) with an
 * enveloped signature inserted as its child at `position` (after `saml:Issuer` for SAML, as its schema
 * requires). The document is changed in place.
 */
export async function signEnveloped(root: XmlElement, target: XmlElement, signer: XmlSigner, position: number): Promise<void> {
  const id = target.attrs.find(([name]) => name === "ID")?.[1];
  if (!id) throw new Error("The signed element has no ID attribute");
  const scope = ancestorScope(root, target) ?? EMPTY_SCOPE;
  const digestAlg = DIGEST_ALGORITHMS[signer.digestAlgorithm];
  const signatureAlg = SIGNATURE_ALGORITHMS[signer.signatureAlgorithm];
  // The enveloped-signature transform removes the signature being computed: there is none yet.
  const digest = new Uint8Array(await crypto.subtle.digest(digestAlg.hash, new TextEncoder().encode(excC14n(target, scope))));
  const signedInfo = el("ds:SignedInfo", {}, [
    el("ds:CanonicalizationMethod", { Algorithm: EXC_C14N }),
    el("ds:SignatureMethod", { Algorithm: signatureAlg.uri }),
    el("ds:Reference", { URI: `#${id}` }, [
      el("ds:Transforms", {}, [el("ds:Transform", { Algorithm: ENVELOPED }), el("ds:Transform", { Algorithm: EXC_C14N })]),
      el("ds:DigestMethod", { Algorithm: digestAlg.uri }),
      el("ds:DigestValue", {}, [base64(digest)]),
    ]),
  ]);
  const signature = el("ds:Signature", { "xmlns:ds": DSIG_NS }, [signedInfo]);
  const signedInfoScope = scopeOf(signature, scopeOf(target, scope));
  const value = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signer.key, new TextEncoder().encode(excC14n(signedInfo, signedInfoScope)));
  signature.children.push(
    el("ds:SignatureValue", {}, [base64(new Uint8Array(value))]),
    el("ds:KeyInfo", {}, [el("ds:X509Data", {}, [el("ds:X509Certificate", {}, [signer.certificate])])]),
  );
  target.children.splice(position, 0, signature);
}

/** The namespaces in scope at `target`'s parent, or null when `target` is not under `root`. */
function ancestorScope(node: XmlElement, target: XmlElement, scope: Scope = EMPTY_SCOPE): Scope | null {
  if (node === target) return scope;
  const inner = scopeOf(node, scope);
  for (const child of node.children) {
    if (typeof child === "string") continue;
    const found = ancestorScope(child, target, inner);
    if (found) return found;
  }
  return null;
}

/** The index just after the element's first child named `local` (its Issuer), or 0. */
export function afterChild(element: XmlElement, local: string): number {
  const index = element.children.findIndex((c) => typeof c !== "string" && localOf(c.name) === local);
  return index + 1;
}
