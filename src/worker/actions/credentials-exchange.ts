import { OAuthError, type OAuthErrorCode } from "../../shared/errors";
import { MANAGEMENT_AUDIENCE } from "../../shared/scopes";
import type { Json, TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { clientIp } from "../http/audit";
import { boundTo, dispatch, recordAfterResponse, tokenClaims } from "./runtime";

/** Codes a credentials-exchange action may deny with (the reference platform's); anything else is access_denied. */
const DENY_CODES: readonly OAuthErrorCode[] = ["invalid_scope", "invalid_request", "server_error", "access_denied"];

/**
 * Runs the credentials-exchange actions of a client_credentials request (SPEC §6.1: inline, token-mutating).
 * Answers the custom access-token claims after the claim rules; a deny throws the action's OAuth error, a
 * failure or timeout throws `access_denied` with its message. The execution and warnings are recorded after
 * the response.
 */
export async function runCredentialsExchange(
  c: AppContext,
  config: TenantConfig,
  client: ClientRecord,
  exchange: { audience: string; scope: string },
): Promise<Record<string, Json>> {
  if (!boundTo(config, "credentials-exchange").length) return {};
  const url = new URL(c.req.url);
  const scopes = exchange.scope.split(" ").filter(Boolean);
  const outcome = await dispatch(c, config, "credentials-exchange", {
    accessToken: { customClaims: {}, scope: scopes },
    client: { client_id: client.client_id, name: client.name, metadata: client.client_metadata },
    request: { ip: clientIp(c), hostname: url.hostname, user_agent: c.req.header("user-agent") ?? null, geoip: {} },
    resource_server: { identifier: exchange.audience },
    tenant: { id: c.get("tenant").id },
    transaction: { requested_scopes: scopes },
  });
  const claims = tokenClaims(c, outcome, { systemAudience: exchange.audience === MANAGEMENT_AUDIENCE, client_id: client.client_id });
  await recordAfterResponse(c, outcome, outcome.stop ? [] : claims.warnings);
  if (outcome.stop?.kind === "failed") throw new OAuthError("access_denied", outcome.stop.message);
  if (outcome.stop?.kind === "denied") {
    const { code, reason } = outcome.stop.command;
    const known = DENY_CODES.find((x) => x === code) ?? "access_denied";
    throw new OAuthError(known, reason ?? `Access denied by the action ${outcome.stop.action_name}`);
  }
  return claims.access_token;
}
