import { z } from "zod";

/** A scope or permission name: one token of the space-separated `scope` parameter (RFC 6749 §3.3). */
export const scopeValue = z
  .string()
  .min(1)
  .max(280)
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "scope values are printable ASCII without spaces, quotes or backslashes");

const scopes = z
  .array(z.strictObject({ value: scopeValue, description: z.string().max(500).optional() }))
  .max(1000)
  .refine((list) => new Set(list.map((s) => s.value)).size === list.length, "scope values must be unique");

const name = z.string().trim().min(1).max(200);

/** Asymmetric access-token algorithms: the tenant's key ring holds a key of each in use (SPEC §4.2, issue 14). */
export const ASYMMETRIC_SIGNING_ALGS = ["RS256", "PS256", "ES256", "EdDSA"] as const;
/**
 * An API's `signing_alg`: an asymmetric one, RS512 (the reference platform's SigningAlgorithmEnum has it for
 * APIs; not a tenant default), or HS256 with the API's own signing secret (the reference platform's).
 */
export const SIGNING_ALGS = [...ASYMMETRIC_SIGNING_ALGS, "RS512", "HS256"] as const;
const signingAlg = z.enum(SIGNING_ALGS, { message: `signing_alg must be one of ${SIGNING_ALGS.join(", ")}` });

/** The reference platform's signing secret: at least 16 characters. */
const signingSecret = z.string().min(16).max(1024).regex(/^[\x21-\x7E]+$/, "signing_secret must be printable ASCII without spaces");

/** Access-token lifetime in seconds: one minute to 30 days. */
const tokenLifetime = z.int().min(60).max(2_592_000);

/**
 * Access-token dialects (the reference platform's `token_dialect`): `access_token_authz` adds the user's
 * permissions for the API as a `permissions` claim when RBAC (`enforce_policies`) is on.
 */
export const TOKEN_DIALECTS = ["access_token", "access_token_authz"] as const;
const tokenDialect = z.enum(TOKEN_DIALECTS, { message: `token_dialect must be one of ${TOKEN_DIALECTS.join(", ")}` });

/**
 * The reference platform's `proof_of_possession`: with `required`, the API's access tokens are issued only
 * bound to a key. Gatehouse binds with DPoP (RFC 9449); mutual-TLS binding (`mtls`, RFC 8705) needs client
 * certificates at the edge, which it does not take, so that mechanism is refused rather than stored unenforced.
 */
const proofOfPossession = z
  .strictObject({
    mechanism: z.enum(["dpop", "mtls"], { message: "proof_of_possession.mechanism must be one of dpop, mtls" }),
    required: z.boolean(),
  })
  .refine((pop) => pop.mechanism === "dpop", {
    message: "proof_of_possession.mechanism mtls is not available: Gatehouse binds access tokens with DPoP (RFC 9449)",
    path: ["mechanism"],
  })
  .nullable();

/** An API's token-binding requirement, as stored (`null`: none). */
export interface ProofOfPossession {
  mechanism: "dpop";
  required: boolean;
}

/** POST /api/v2/resource-servers. Unknown properties are refused. */
export const createResourceServerBody = z.strictObject({
  identifier: z.string().trim().min(1).max(600),
  name: name.optional(),
  scopes: scopes.optional(),
  signing_alg: signingAlg.optional(),
  token_lifetime: tokenLifetime.optional(),
  allow_offline_access: z.boolean().optional(),
  enforce_policies: z.boolean().optional(),
  token_dialect: tokenDialect.optional(),
  signing_secret: signingSecret.optional(),
  proof_of_possession: proofOfPossession.optional(),
});

/** PATCH /api/v2/resource-servers/{id}: the identifier is immutable (it is the audience of issued tokens). */
export const updateResourceServerBody = z
  .strictObject({
    name,
    scopes,
    signing_alg: signingAlg,
    token_lifetime: tokenLifetime,
    allow_offline_access: z.boolean(),
    enforce_policies: z.boolean(),
    token_dialect: tokenDialect,
    signing_secret: signingSecret,
    proof_of_possession: proofOfPossession,
  })
  .partial();

/** @default 86400 (one day), the reference platform's default access-token lifetime. */
export const DEFAULT_TOKEN_LIFETIME_S = 86_400;

export interface ResourceServerRecord {
  id: string;
  identifier: string;
  name: string;
  scopes: { value: string; description?: string }[];
  signing_alg: string;
  token_lifetime: number;
  allow_offline_access: boolean;
  /** RBAC: user tokens carry only the user's permissions for this API (the reference platform's switch). */
  enforce_policies: boolean;
  /** `access_token_authz`: user tokens also carry a `permissions` claim when RBAC is on. */
  token_dialect: "access_token" | "access_token_authz";
  /** The HS256 signing secret, encrypted (never shown; the worker opens it); null when the API has none. */
  signing_secret_enc: string | null;
  /** With `required`, access tokens for this API are issued only DPoP-bound (issue 33); null: no setting. */
  proof_of_possession: ProofOfPossession | null;
  is_system: boolean;
  created_at: string;
  updated_at: string;
}

export type NewResourceServer = Omit<ResourceServerRecord, "is_system" | "created_at" | "updated_at">;

export type ResourceServerPatch = Partial<
  Pick<
    NewResourceServer,
    "name" | "scopes" | "signing_alg" | "token_lifetime" | "allow_offline_access" | "enforce_policies" | "token_dialect" | "signing_secret_enc" | "proof_of_possession"
  >
> & {
  /** A generated encrypted secret, stored only when the API has none (switching to HS256). */
  signing_secret_enc_if_missing?: string;
};

/** Whether an API takes only DPoP-bound access tokens. */
export const requiresDpop = (api: Pick<ResourceServerRecord, "proof_of_possession"> | undefined): boolean =>
  api?.proof_of_possession?.mechanism === "dpop" && api.proof_of_possession.required === true;
