/**
 * Reading an SP's AuthnRequest (saml-core-2.0-os §3.4.1) from either binding (saml-bindings-2.0-os §3.4
 * HTTP-Redirect: base64 of raw DEFLATE; §3.5 HTTP-POST: base64 of the XML). Everything is bounded: the
 * encoded parameter, the inflated size (a deflate bomb stops at the limit) and the XML itself, which goes
 * through the strict parser (no DTD, no entities).
 */
import { parseXml, XmlParseError } from "../xml/parse";
import { attribute, childElements, EMPTY_SCOPE, localOf, namespaceOf, scopeOf, textOf } from "../xml/tree";
import { SAML } from "./constants";

/** @default 65536: far above any real AuthnRequest (a few hundred bytes to a few KB when signed). */
export const MAX_SAML_REQUEST_BYTES = 65_536;

export class SamlRequestError extends Error {
  override name = "SamlRequestError";
}

/** What Gatehouse uses of an AuthnRequest. */
export interface AuthnRequest {
  id: string;
  issuer?: string;
  assertionConsumerServiceUrl?: string;
  protocolBinding?: string;
  destination?: string;
  forceAuthn: boolean;
  isPassive: boolean;
  nameIdFormat?: string;
}

function fromBase64(encoded: string): Uint8Array {
  const compact = encoded.replace(/[\s]+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) throw new SamlRequestError("SAMLRequest is not base64");
  try {
    return Uint8Array.from(atob(compact), (c) => c.charCodeAt(0));
  } catch {
    throw new SamlRequestError("SAMLRequest is not base64");
  }
}

async function inflateRaw(bytes: Uint8Array, limit: number): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > limit) {
        await reader.cancel();
        throw new SamlRequestError(`SAMLRequest inflates to more than ${limit} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof SamlRequestError) throw error;
    throw new SamlRequestError("SAMLRequest is not valid DEFLATE data");
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * The XML text of a SAMLRequest parameter: deflated (HTTP-Redirect) or not (HTTP-POST); like the reference
 * platform, a parameter that already starts with `<` once decoded is taken as plain XML in either binding.
 */
export async function decodeSamlRequest(encoded: string): Promise<string> {
  if (encoded.length > (MAX_SAML_REQUEST_BYTES * 4) / 3 + 4) throw new SamlRequestError("SAMLRequest is too large");
  const bytes = fromBase64(encoded);
  let start = 0;
  while (start < bytes.length && [0x20, 0x09, 0x0a, 0x0d].includes(bytes[start] ?? 0)) start++;
  const plain = bytes[start] === 0x3c || (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf);
  const xml = plain ? bytes : await inflateRaw(bytes, MAX_SAML_REQUEST_BYTES);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(xml);
  } catch {
    throw new SamlRequestError("SAMLRequest is not UTF-8");
  }
}

const NCNAME = /^[A-Za-z_][A-Za-z0-9._-]{0,255}$/;
const bool = (value: string | undefined) => value === "true" || value === "1";

/** Parses and checks an AuthnRequest (root element, version, ID); anything else is SamlRequestError. */
export function parseAuthnRequest(xml: string): AuthnRequest {
  let root: ReturnType<typeof parseXml>;
  try {
    root = parseXml(xml, { maxLength: MAX_SAML_REQUEST_BYTES });
  } catch (error) {
    throw new SamlRequestError(error instanceof XmlParseError ? `SAMLRequest is not acceptable XML: ${error.message}` : "SAMLRequest is not XML");
  }
  const scope = scopeOf(root, EMPTY_SCOPE);
  if (localOf(root.name) !== "AuthnRequest" || namespaceOf(root.name, scope) !== SAML.protocol) {
    throw new SamlRequestError("SAMLRequest is not an AuthnRequest");
  }
  if (attribute(root, "Version") !== "2.0") throw new SamlRequestError("AuthnRequest Version must be 2.0");
  const id = attribute(root, "ID");
  if (!id || !NCNAME.test(id)) throw new SamlRequestError("AuthnRequest ID is missing or not an xs:ID");
  const issuer = childElements(root, EMPTY_SCOPE, SAML.assertion, "Issuer")[0];
  const policy = childElements(root, EMPTY_SCOPE, SAML.protocol, "NameIDPolicy")[0];
  const acs = attribute(root, "AssertionConsumerServiceURL");
  const binding = attribute(root, "ProtocolBinding");
  const destination = attribute(root, "Destination");
  const format = policy ? attribute(policy, "Format") : undefined;
  const issuerText = issuer ? textOf(issuer).trim() : "";
  return {
    id,
    ...(issuerText ? { issuer: issuerText } : {}),
    ...(acs ? { assertionConsumerServiceUrl: acs } : {}),
    ...(binding ? { protocolBinding: binding } : {}),
    ...(destination ? { destination } : {}),
    forceAuthn: bool(attribute(root, "ForceAuthn")),
    isPassive: bool(attribute(root, "IsPassive")),
    ...(format ? { nameIdFormat: format } : {}),
  };
}
