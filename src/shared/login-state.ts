/**
 * The prefix of a sealed login session's id (issue 31): the state an OIDC /authorize hands to the /u2 pages
 * when it stores nothing (src/worker/tenant/login-state.ts seals and opens it; the tenant object only tells it
 * from a stored session's `ls_` id). Stored sessions keep ids without it.
 */
export const SEALED_LOGIN_STATE_PREFIX = "lss1.";
