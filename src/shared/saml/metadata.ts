/**
 * IdP metadata of one application (saml-metadata-2.0-os §2.4.3): the entity id, one signing KeyDescriptor
 * per certificate an SP should trust now (the key that signs and, during a scheduled rotation, the next
 * one, so SPs can add it before it activates), the SSO endpoint for both bindings and the NameID formats.
 */
import { el, serialize } from "../xml/tree";
import { DSIG_NS } from "./xmldsig";
import { CLAIMS, NAME_ID_FORMATS, SAML } from "./constants";

export interface IdpMetadataInput {
  entityId: string;
  /** The SSO endpoint (`/samlp/{client_id}`), for HTTP-Redirect and HTTP-POST. */
  ssoUrl: string;
  /** Base64 DER certificates, the signing one first. */
  certificates: string[];
}

const ADVERTISED_CLAIMS: [string, string][] = [
  [CLAIMS.email, "E-Mail Address"],
  [CLAIMS.givenName, "Given Name"],
  [CLAIMS.name, "Name"],
  [CLAIMS.surname, "Surname"],
  [CLAIMS.nameIdentifier, "Name ID"],
];

export function idpMetadata(input: IdpMetadataInput): string {
  const root = el("EntityDescriptor", { xmlns: SAML.metadata, entityID: input.entityId }, [
    el("IDPSSODescriptor", { protocolSupportEnumeration: SAML.protocol, WantAuthnRequestsSigned: "false" }, [
      ...input.certificates.map((certificate) =>
        el("KeyDescriptor", { use: "signing" }, [
          el("KeyInfo", { xmlns: DSIG_NS }, [el("X509Data", {}, [el("X509Certificate", {}, [certificate])])]),
        ]),
      ),
      el("NameIDFormat", {}, [NAME_ID_FORMATS.emailAddress]),
      el("NameIDFormat", {}, [NAME_ID_FORMATS.persistent]),
      el("NameIDFormat", {}, [NAME_ID_FORMATS.transient]),
      el("NameIDFormat", {}, [NAME_ID_FORMATS.unspecified]),
      el("SingleSignOnService", { Binding: SAML.bindingRedirect, Location: input.ssoUrl }),
      el("SingleSignOnService", { Binding: SAML.bindingPost, Location: input.ssoUrl }),
      ...ADVERTISED_CLAIMS.map(([name, friendly]) =>
        el("Attribute", { xmlns: SAML.assertion, Name: name, NameFormat: SAML.attrnameUri, FriendlyName: friendly }),
      ),
    ]),
  ]);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${serialize(root)}`;
}
