/**
 * Verifying a signed AuthnRequest against the SP's certificate (the reference platform's
 * `addons.samlp.signingCert`: when set, requests must be signed by its key).
 * - HTTP-Redirect (saml-bindings-2.0-os §3.4.4.1): `Signature` over the octets
 *   `SAMLRequest=...&RelayState=...&SigAlg=...` exactly as they appear URL-encoded in the query.
 * - HTTP-POST (§3.5.4): an enveloped XML signature that is a child of the AuthnRequest and references it,
 *   with exclusive C14N for both the reference and SignedInfo, each with an optional InclusiveNamespaces
 *   PrefixList (as xmlsec-based SP libraries send).
 * Accepted algorithms: rsa-sha256 and, like the reference platform, the legacy rsa-sha1; anything else is
 * refused. Only the certificate's RSA public key is used (its validity dates and issuer are not checked).
 * Every failure is a value, never an exception.
 */
import { certificateDer, rsaSpkiOfCertificate } from "../crypto/x509";
import { excC14n } from "../xml/c14n";
import { parseXml } from "../xml/parse";
import { attribute, childElements, EMPTY_SCOPE, localOf, type Scope, scopeOf, textOf, type XmlElement } from "../xml/tree";
import { DIGEST_ALGORITHMS, DSIG_NS, ENVELOPED, EXC_C14N, SIGNATURE_ALGORITHMS } from "./xmldsig";
import { MAX_SAML_REQUEST_BYTES } from "./authn-request";

export type SignatureCheck = { ok: true } | { ok: false; code: SignatureFailure; message: string };
export type SignatureFailure = "SIGNATURE_REQUIRED" | "INVALID_SIGNATURE" | "UNSUPPORTED_SIGNATURE_ALGORITHM" | "INVALID_SIGNING_CERT";

const OK: SignatureCheck = { ok: true };
const fail = (code: SignatureFailure, message: string): SignatureCheck => ({ ok: false, code, message });
const REQUIRED = fail("SIGNATURE_REQUIRED", "The AuthnRequest must be signed");
const INVALID = fail("INVALID_SIGNATURE", "The AuthnRequest signature is not valid");

/** Signature algorithm URI -> WebCrypto hash. */
const HASH_OF_SIGNATURE: ReadonlyMap<string, "SHA-256" | "SHA-1"> = new Map(Object.values(SIGNATURE_ALGORITHMS).map((a) => [a.uri, a.hash]));
const HASH_OF_DIGEST: ReadonlyMap<string, "SHA-256" | "SHA-1"> = new Map(Object.values(DIGEST_ALGORITHMS).map((a) => [a.uri, a.hash]));

function fromBase64(text: string): Uint8Array | null {
  const compact = text.replace(/\s+/g, "");
  if (!compact || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) return null;
  try {
    return Uint8Array.from(atob(compact), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Whether `signingCert` is a certificate whose RSA key can verify requests (checked when it is stored). */
export const isUsableSigningCert = (signingCert: string): boolean => {
  const der = certificateDer(signingCert);
  return der !== null && rsaSpkiOfCertificate(der) !== null;
};

async function verifyWith(signingCert: string, hash: "SHA-256" | "SHA-1", signature: Uint8Array, data: Uint8Array): Promise<SignatureCheck> {
  const der = certificateDer(signingCert);
  const spki = der ? rsaSpkiOfCertificate(der) : null;
  if (!spki) return fail("INVALID_SIGNING_CERT", "The application's signingCert is not an X.509 certificate with an RSA key");
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("spki", spki, { name: "RSASSA-PKCS1-v1_5", hash }, false, ["verify"]);
  } catch {
    return fail("INVALID_SIGNING_CERT", "The application's signingCert is not an X.509 certificate with an RSA key");
  }
  try {
    return (await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, signature, data)) ? OK : INVALID;
  } catch {
    return INVALID;
  }
}

const unsupported = (uri: string) => fail("UNSUPPORTED_SIGNATURE_ALGORITHM", `The AuthnRequest signature algorithm is not supported: ${uri.slice(0, 200)}`);

function decodeComponent(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

/**
 * HTTP-Redirect: checks `SigAlg` and `Signature` of the raw query string (without `?`), parsed as
 * URLSearchParams parses it so that the SAMLRequest verified is the one the endpoint reads.
 */
export async function verifyRedirectSignature(rawQuery: string, signingCert: string): Promise<SignatureCheck> {
  const raw = new Map<string, string[]>();
  for (const segment of rawQuery.split("&")) {
    if (!segment) continue;
    const eq = segment.indexOf("=");
    const name = decodeComponent(eq < 0 ? segment : segment.slice(0, eq));
    if (name === null) return INVALID;
    raw.set(name, [...(raw.get(name) ?? []), segment]);
  }
  const one = (name: string) => raw.get(name)?.[0];
  for (const name of ["SAMLRequest", "RelayState", "SigAlg", "Signature"]) {
    if ((raw.get(name)?.length ?? 0) > 1) return fail("INVALID_SIGNATURE", `Parameter "${name}" is repeated`);
  }
  const request = one("SAMLRequest");
  const sigAlg = one("SigAlg");
  const signature = one("Signature");
  if (!request || !sigAlg || !signature) return REQUIRED;
  const decodedValue = (segment: string) => decodeComponent(segment.slice(segment.indexOf("=") + 1)) ?? "";
  const algorithm = decodedValue(sigAlg);
  const hash = HASH_OF_SIGNATURE.get(algorithm);
  if (!hash) return unsupported(algorithm);
  const signatureBytes = fromBase64(decodedValue(signature));
  if (!signatureBytes) return INVALID;
  const relayState = one("RelayState");
  const signed = [request, ...(relayState !== undefined ? [relayState] : []), sigAlg].join("&");
  return verifyWith(signingCert, hash, signatureBytes, new TextEncoder().encode(signed));
}

/** The one child element named `local` in the XML-DSig namespace, or null when there is none or several. */
const EXC_C14N_NS = "http://www.w3.org/2001/10/xml-exc-c14n#";

/**
 * The InclusiveNamespaces PrefixList of an exclusive C14N method or transform ([] when it has none), or null
 * when it has any other child (not something this verifier understands). `scope`: the namespaces in scope
 * at the method's parent.
 */
function prefixListOf(method: XmlElement, scope: Scope): string[] | null {
  if (!hasElementChildren(method)) return [];
  const lists = childElements(method, scope, EXC_C14N_NS, "InclusiveNamespaces");
  const elements = method.children.filter((c) => typeof c !== "string");
  const list = lists[0];
  if (!list || lists.length !== 1 || elements.length !== 1 || hasElementChildren(list)) return null;
  return (attribute(list, "PrefixList") ?? "").split(/[ \t\r\n]+/).filter(Boolean);
}

/**
 * Whether the enveloped-signature transform carries no parameter it would act on. It takes none; xml-crypto
 * (used by Node SPs) copies the reference's InclusiveNamespaces under it too, which means nothing there.
 */
function parameterless(transform: XmlElement): boolean {
  return transform.children.every((c) => typeof c === "string" || (localOf(c.name) === "InclusiveNamespaces" && !hasElementChildren(c)));
}

function onlyChild(element: XmlElement, scope: Scope, local: string): XmlElement | null {
  const found = childElements(element, scope, DSIG_NS, local);
  return found.length === 1 ? (found[0] ?? null) : null;
}

const hasElementChildren = (element: XmlElement) => element.children.some((c) => typeof c !== "string");

/**
 * HTTP-POST: checks the enveloped signature of an AuthnRequest document (already accepted by
 * parseAuthnRequest). The signature must be a direct child of the root and its one Reference must be the
 * root's ID, so what is verified is exactly the element whose fields the endpoint reads.
 */
export async function verifyPostSignature(xml: string, signingCert: string): Promise<SignatureCheck> {
  let root: XmlElement;
  try {
    root = parseXml(xml, { maxLength: MAX_SAML_REQUEST_BYTES });
  } catch {
    return INVALID;
  }
  const signatures = childElements(root, EMPTY_SCOPE, DSIG_NS, "Signature");
  if (signatures.length === 0) return REQUIRED;
  const signature = signatures[0];
  if (signatures.length > 1 || !signature) return INVALID;
  const rootScope = scopeOf(root, EMPTY_SCOPE);
  const signatureScope = scopeOf(signature, rootScope);
  const signedInfo = onlyChild(signature, rootScope, "SignedInfo");
  const signatureValue = onlyChild(signature, rootScope, "SignatureValue");
  if (!signedInfo || !signatureValue) return INVALID;

  const infoScope = scopeOf(signedInfo, signatureScope);
  const c14nMethod = onlyChild(signedInfo, signatureScope, "CanonicalizationMethod");
  const signatureMethod = onlyChild(signedInfo, signatureScope, "SignatureMethod");
  const references = childElements(signedInfo, signatureScope, DSIG_NS, "Reference");
  const reference = references[0];
  if (!c14nMethod || !signatureMethod || references.length !== 1 || !reference) return INVALID;
  const c14n = attribute(c14nMethod, "Algorithm") ?? "";
  const infoPrefixes = prefixListOf(c14nMethod, infoScope);
  if (c14n !== EXC_C14N || !infoPrefixes) return unsupported(c14n);
  const signatureAlgorithm = attribute(signatureMethod, "Algorithm") ?? "";
  const hash = HASH_OF_SIGNATURE.get(signatureAlgorithm);
  if (!hash) return unsupported(signatureAlgorithm);

  const id = attribute(root, "ID");
  if (!id || attribute(reference, "URI") !== `#${id}`) return INVALID;
  const referenceScope = scopeOf(reference, infoScope);
  const transforms = onlyChild(reference, infoScope, "Transforms");
  const transformList = transforms ? childElements(transforms, referenceScope, DSIG_NS, "Transform") : [];
  const algorithms = transformList.map((t) => attribute(t, "Algorithm") ?? "");
  // Only the enveloped-signature transform then exclusive C14N (with or without an InclusiveNamespaces PrefixList).
  const [envelopedTransform, c14nTransform] = transformList;
  const referencePrefixes = c14nTransform ? prefixListOf(c14nTransform, transforms ? scopeOf(transforms, referenceScope) : referenceScope) : null;
  if (algorithms.length !== 2 || algorithms[0] !== ENVELOPED || algorithms[1] !== EXC_C14N || !envelopedTransform || !parameterless(envelopedTransform) || !referencePrefixes) {
    return unsupported(algorithms.join(" "));
  }
  const digestMethod = onlyChild(reference, infoScope, "DigestMethod");
  const digestValue = onlyChild(reference, infoScope, "DigestValue");
  const digestHash = digestMethod ? HASH_OF_DIGEST.get(attribute(digestMethod, "Algorithm") ?? "") : undefined;
  if (!digestMethod || !digestValue) return INVALID;
  if (!digestHash) return unsupported(attribute(digestMethod, "Algorithm") ?? "");
  const expectedDigest = fromBase64(textOf(digestValue));
  const signatureBytes = fromBase64(textOf(signatureValue));
  if (!expectedDigest || !signatureBytes) return INVALID;

  const unsigned: XmlElement = { ...root, children: root.children.filter((c) => c !== signature) };
  const digest = new Uint8Array(await crypto.subtle.digest(digestHash, new TextEncoder().encode(excC14n(unsigned, EMPTY_SCOPE, referencePrefixes))));
  if (digest.length !== expectedDigest.length || !digest.every((b, i) => b === expectedDigest[i])) return INVALID;
  return verifyWith(signingCert, hash, signatureBytes, new TextEncoder().encode(excC14n(signedInfo, signatureScope, infoPrefixes)));
}
