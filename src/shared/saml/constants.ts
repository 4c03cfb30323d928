/** SAML 2.0 names (OASIS saml-core-2.0-os, saml-bindings-2.0-os, saml-metadata-2.0-os). */
export const SAML = {
  assertion: "urn:oasis:names:tc:SAML:2.0:assertion",
  protocol: "urn:oasis:names:tc:SAML:2.0:protocol",
  metadata: "urn:oasis:names:tc:SAML:2.0:metadata",
  bindingRedirect: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
  bindingPost: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
  bearer: "urn:oasis:names:tc:SAML:2.0:cm:bearer",
  success: "urn:oasis:names:tc:SAML:2.0:status:Success",
  responder: "urn:oasis:names:tc:SAML:2.0:status:Responder",
  noPassive: "urn:oasis:names:tc:SAML:2.0:status:NoPassive",
  requestDenied: "urn:oasis:names:tc:SAML:2.0:status:RequestDenied",
  attrnameUri: "urn:oasis:names:tc:SAML:2.0:attrname-format:uri",
  attrnameBasic: "urn:oasis:names:tc:SAML:2.0:attrname-format:basic",
  xs: "http://www.w3.org/2001/XMLSchema",
  xsi: "http://www.w3.org/2001/XMLSchema-instance",
} as const;

/** NameID formats the metadata offers (the reference platform's list). */
export const NAME_ID_FORMATS = {
  unspecified: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
  emailAddress: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  persistent: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  transient: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
} as const;

/** The claim types the reference platform maps a profile to (WS-Federation / ADFS names). */
export const CLAIMS = {
  nameIdentifier: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier",
  email: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
  name: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
  givenName: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname",
  surname: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname",
  upn: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn",
  groups: "http://schemas.xmlsoap.org/claims/Group",
} as const;

/**
 * The attribute-name prefix of unmapped profile fields passed through: the reference platform's own, so a
 * service provider configured against it reads the same attribute names from Gatehouse.
 */
export const PASSTHROUGH_NAMESPACE = "http://schemas.auth0.com/";
