import { z } from "zod";
import { MAX_CERTIFICATE_CHARS } from "../crypto/x509";
import { isUsableSigningCert } from "../saml/request-signature";

/**
 * The SAML2 Web App addon of an application (`addons.samlp`), the reference platform's settings
 * (ClientAddonSaml) with their types checked. Gatehouse extension: `allowIdpInitiated` (IdP-initiated
 * login, off by default). Other properties the reference accepts are kept as given (its schema allows
 * additional properties); those Gatehouse does not implement are listed in docs/saml.md.
 */
const uri = z.string().trim().min(1).max(2048);
const attributeName = z.string().min(1).max(1024);

export const samlpSettings = z.looseObject({
  audience: uri.optional(),
  recipient: uri.optional(),
  destination: uri.optional(),
  issuer: uri.optional(),
  mappings: z
    .record(z.string().min(1).max(255), z.union([attributeName, z.array(attributeName).min(1).max(10)]))
    .refine((m) => Object.keys(m).length <= 100, "mappings allows at most 100 properties")
    .optional(),
  createUpnClaim: z.boolean().optional(),
  passthroughClaimsWithNoMapping: z.boolean().optional(),
  mapUnknownClaimsAsIs: z.boolean().optional(),
  mapIdentities: z.boolean().optional(),
  signatureAlgorithm: z.enum(["rsa-sha256", "rsa-sha1"]).optional(),
  digestAlgorithm: z.enum(["sha256", "sha1"]).optional(),
  lifetimeInSeconds: z.int().min(1).max(2_592_000).optional(),
  signResponse: z.boolean().optional(),
  nameIdentifierFormat: uri.optional(),
  nameIdentifierProbes: z.array(attributeName).min(1).max(20).optional(),
  authnContextClassRef: uri.optional(),
  typedAttributes: z.boolean().optional(),
  includeAttributeNameFormat: z.boolean().optional(),
  /**
   * The SP's certificate (PEM or base64 DER, RSA key): when set, AuthnRequests must be signed with its key
   * (../saml/request-signature.ts).
   */
  signingCert: z
    .string()
    .max(MAX_CERTIFICATE_CHARS)
    .refine(isUsableSigningCert, "signingCert must be an X.509 certificate with an RSA public key (PEM or base64 DER)")
    .optional(),
  /** Gatehouse: accept logins started at the IdP (no AuthnRequest). @default false */
  allowIdpInitiated: z.boolean().optional(),
});

export type SamlpSettings = z.infer<typeof samlpSettings>;

/** `addons`: the SAML2 Web App addon; other addons of the reference platform are not offered. */
export const clientAddons = z.strictObject({ samlp: samlpSettings.optional() });

/** @default 3600 (the reference platform's lifetimeInSeconds) */
export const DEFAULT_SAML_LIFETIME_S = 3600;
