import { z } from "zod";

/** Signing algorithms the reference platform allows for a public-key credential. @default RS256 */
export const CREDENTIAL_ALGS = ["RS256", "RS384", "PS256"] as const;

/**
 * POST /api/v2/clients/{id}/credentials. Gatehouse keeps public keys for private_key_jwt; the certificate
 * kinds (`x509_cert`, `cert_subject_dn`: mutual-TLS client authentication) are refused with a clear 400.
 */
export const createClientCredentialBody = z.strictObject({
  credential_type: z.enum(["public_key", "x509_cert", "cert_subject_dn"]),
  name: z.string().trim().min(1).max(128).optional(),
  pem: z.string().min(1).max(20_000).optional(),
  subject_dn: z.string().max(256).optional(),
  alg: z.enum(CREDENTIAL_ALGS).optional(),
  parse_expiry_from_cert: z.boolean().optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
});

/** PATCH /api/v2/clients/{id}/credentials/{credential_id}: only the expiry changes (null: never expires). */
export const updateClientCredentialBody = z.strictObject({ expires_at: z.iso.datetime({ offset: true }).nullable() });

export interface ClientCredentialRecord {
  id: string;
  client_id: string;
  name: string | null;
  credential_type: "public_key";
  /** RFC 7638 thumbprint of the key: the `kid` an assertion names. */
  kid: string;
  alg: (typeof CREDENTIAL_ALGS)[number];
  /** The public key as a JWK (with kid and alg). */
  public_jwk: Record<string, string>;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
}

export type NewClientCredential = Omit<ClientCredentialRecord, "created_at" | "updated_at" | "expires_at"> & { expires_at: number | null };
