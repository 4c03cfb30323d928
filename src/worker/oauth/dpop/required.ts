import { OAuthError } from "../../../shared/errors";

/**
 * A token request for an API whose `proof_of_possession` requires DPoP, sent without a proof (issue 33
 * point 4): refused before anything is issued or spent, as a missing required parameter (RFC 6749 §5.2).
 */
export const dpopRequired = (audience: string): OAuthError =>
  new OAuthError("invalid_request", `The API ${audience} accepts only DPoP-bound access tokens: send a DPoP proof with the token request (RFC 9449)`);
