/**
 * The SAML 2.0 Response a login completes with (saml-core-2.0-os §2-3; Web Browser SSO profile,
 * saml-profiles-2.0-os §4.1.4.2): a bearer assertion with the subject confirmation data, audience
 * restriction, authentication statement and attributes, always signed, the Response too when asked.
 */
import { randomId } from "../crypto/random";
import { el, type XmlElement } from "../xml/tree";
import { SAML } from "./constants";
import type { SamlAttribute } from "./profile";
import { afterChild, signEnveloped, type XmlSigner } from "./xmldsig";

export interface SamlResponseInput {
  /** The IdP entity id (Issuer). */
  issuer: string;
  /** Response@Destination: where it is posted. */
  destination: string;
  /** SubjectConfirmationData@Recipient. */
  recipient: string;
  audience: string;
  /** The AuthnRequest ID (absent for IdP-initiated logins). */
  inResponseTo?: string;
  nameId: { value: string; format: string };
  sessionIndex: string;
  /** Epoch ms of the user's authentication. */
  authnInstant: number;
  /** Epoch ms. */
  now: number;
  lifetimeS: number;
  authnContextClassRef: string;
  attributes: SamlAttribute[];
  typedAttributes: boolean;
  includeAttributeNameFormat: boolean;
  signResponse: boolean;
}

/** SAML IDs are xs:ID (NCName): a letter or underscore first. */
export const samlId = () => randomId("_", 32);

const instant = (ms: number) => new Date(ms).toISOString();

function xsType(value: string | number | boolean): string {
  if (typeof value === "boolean") return "xs:boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "xs:integer" : "xs:double";
  return "xs:string";
}

function attributeStatement(input: SamlResponseInput): XmlElement | null {
  if (!input.attributes.length) return null;
  const ns = input.typedAttributes ? { "xmlns:xs": SAML.xs, "xmlns:xsi": SAML.xsi } : {};
  return el(
    "saml:AttributeStatement",
    ns,
    input.attributes.map((attribute) =>
      el(
        "saml:Attribute",
        {
          Name: attribute.name,
          NameFormat: input.includeAttributeNameFormat ? (/^[a-z][a-z0-9+.-]*:/i.test(attribute.name) ? SAML.attrnameUri : SAML.attrnameBasic) : undefined,
        },
        attribute.values.map((value) =>
          el("saml:AttributeValue", input.typedAttributes ? { "xsi:type": xsType(value) } : {}, [String(value)]),
        ),
      ),
    ),
  );
}

/** Builds the assertion (unsigned). */
export function buildAssertion(input: SamlResponseInput): XmlElement {
  const notOnOrAfter = instant(input.now + input.lifetimeS * 1000);
  return el("saml:Assertion", { "xmlns:saml": SAML.assertion, ID: samlId(), IssueInstant: instant(input.now), Version: "2.0" }, [
    el("saml:Issuer", {}, [input.issuer]),
    el("saml:Subject", {}, [
      el("saml:NameID", { Format: input.nameId.format }, [input.nameId.value]),
      el("saml:SubjectConfirmation", { Method: SAML.bearer }, [
        el("saml:SubjectConfirmationData", { InResponseTo: input.inResponseTo, NotOnOrAfter: notOnOrAfter, Recipient: input.recipient }),
      ]),
    ]),
    el("saml:Conditions", { NotBefore: instant(input.now), NotOnOrAfter: notOnOrAfter }, [
      el("saml:AudienceRestriction", {}, [el("saml:Audience", {}, [input.audience])]),
    ]),
    el("saml:AuthnStatement", { AuthnInstant: instant(input.authnInstant), SessionIndex: input.sessionIndex }, [
      el("saml:AuthnContext", {}, [el("saml:AuthnContextClassRef", {}, [input.authnContextClassRef])]),
    ]),
    attributeStatement(input),
  ]);
}

/** The `samlp:Response` envelope: issuer, the status made of `statusChildren`, then the assertion if any. */
function responseElement(
  input: Pick<SamlResponseInput, "issuer" | "destination" | "inResponseTo" | "now">,
  statusChildren: Array<XmlElement | null>,
  assertion?: XmlElement,
): XmlElement {
  return el(
    "samlp:Response",
    {
      "xmlns:samlp": SAML.protocol,
      "xmlns:saml": SAML.assertion,
      Destination: input.destination,
      ID: samlId(),
      InResponseTo: input.inResponseTo,
      IssueInstant: instant(input.now),
      Version: "2.0",
    },
    [el("saml:Issuer", {}, [input.issuer]), el("samlp:Status", {}, statusChildren), assertion ?? null],
  );
}

/**
 * A signed Response carrying only a status (saml-core-2.0-os §3.2.2.2), for a request the IdP answers
 * without an assertion: `IsPassive` with no session is Responder / NoPassive.
 */
export async function buildStatusResponse(
  input: Pick<SamlResponseInput, "issuer" | "destination" | "inResponseTo" | "now">,
  status: { code: string; subcode?: string; message?: string },
  signer: XmlSigner,
): Promise<XmlElement> {
  const response = responseElement(input, [
    el("samlp:StatusCode", { Value: status.code }, [status.subcode ? el("samlp:StatusCode", { Value: status.subcode }) : null]),
    status.message ? el("samlp:StatusMessage", {}, [status.message]) : null,
  ]);
  await signEnveloped(response, response, signer, afterChild(response, "Issuer"));
  return response;
}

/**
 * The signed Response document: the assertion is signed (its signature after its Issuer); with
 * `signResponse` the Response is signed as well, over the signed assertion.
 */
export async function buildSignedResponse(input: SamlResponseInput, signer: XmlSigner): Promise<XmlElement> {
  const assertion = buildAssertion(input);
  const response = responseElement(input, [el("samlp:StatusCode", { Value: SAML.success })], assertion);
  await signEnveloped(response, assertion, signer, afterChild(assertion, "Issuer"));
  if (input.signResponse) await signEnveloped(response, response, signer, afterChild(response, "Issuer"));
  return response;
}
