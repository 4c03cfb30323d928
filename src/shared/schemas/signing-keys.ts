/** Signing keys (SPEC §2.9): the stored record and the input that creates one. */

/** A JSON Web Key as stored (public members only unless encrypted). */
export type Jwk = Record<string, string | string[] | undefined>;

/** A signing key row as the worker needs it; the private half stays encrypted until the worker opens it. */
export interface SigningKeyRecord {
  kid: string;
  type: "jwt_signing" | "saml_encryption";
  alg: string;
  public_jwk: Jwk;
  private_jwk_enc: string;
  /** PEM X.509 certificate over the public key (null only for keys created before certificates). */
  cert: string | null;
  /** From then on the key may sign (published in the JWKS from creation). */
  activates_at: string;
  /** End of the grace period after a successor activated: unpublished from then on. */
  retire_at: string | null;
  revoked_at: string | null;
  /** Certificate notAfter: the key neither signs nor is published from then on. */
  expires_at: string | null;
  /** Provided by a parent tenant: read-only here (SPEC §4.2 "Signing keys"). */
  inherited: boolean;
  created_at: string;
}

/** A key pair the worker generated (private half encrypted, certificate issued) for the object to store. */
export interface NewSigningKey {
  kid: string;
  type: "jwt_signing" | "saml_encryption";
  alg: string;
  public_jwk: Jwk;
  private_jwk_enc: string;
  cert: string;
  /** Epoch ms. */
  expires_at: number;
}
