import { OAuthError } from "../../../shared/errors";
import type { TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { AppContext } from "../../context";
import type { SignerFor } from "../../tenant/keys";

/** What every grant handler receives. */
export interface GrantContext {
  c: AppContext;
  params: Record<string, string>;
  config: TenantConfig;
  /** The key that signs now for an algorithm (RS256 unless an API or client chooses another); HS256 takes the API. */
  signer: SignerFor;
  /**
   * The thumbprint of the key of the request's DPoP proof (RFC 9449), verified by the endpoint: access tokens
   * are then bound to it (`cnf.jkt`, `token_type: DPoP`), and so are public clients' refresh tokens.
   */
  dpopJkt?: string;
}

/**
 * SPEC §7: `invalid_grant` is 403 by default; a client whose `oidc_conformant` is false gets 400.
 */
export function invalidGrant(client: ClientRecord, description: string): OAuthError {
  return new OAuthError("invalid_grant", description, client.oidc_conformant === false ? 400 : 403);
}
