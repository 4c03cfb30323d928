import { now } from "../../../shared/clock";
import { randomId } from "../../../shared/crypto/random";
import { OAuthError } from "../../../shared/errors";
import { DEVICE_CODE_GRANT, deviceAuthorizationSchema } from "../../../shared/schemas/oauth";
import type { AppContext } from "../../context";
import { describeIssue, readOAuthParams } from "../../http/body";
import { hashSecret } from "../../login/session";
import { tenantConfig } from "../../tenant/config-cache";
import { tenantConfigSource, tenantObject } from "../../tenant/stubs";
import { authenticateClient, findClient, presentedClient } from "../client-auth";
import { DEVICE_CODE_TTL_S, DEVICE_POLL_INTERVAL_S, newDeviceCode, newUserCode, verificationUri } from "./codes";

/** A user code collision with a live request is drawn again, a few times at most. */
const MAX_DRAWS = 5;

/**
 * POST /oauth/device/code (RFC 8628 §3.1-3.2). Only a client whose `grant_types` names the device grant may
 * start one (an empty list does not: the grant is opt-in); confidential clients authenticate as at the
 * token endpoint. The object stores the hashes of both codes; the device gets the codes and where to send
 * the user.
 */
export async function deviceAuthorizationEndpoint(c: AppContext): Promise<Response> {
  const params = await readOAuthParams(c.req.raw);
  const parsed = deviceAuthorizationSchema.safeParse(params);
  if (!parsed.success) throw new OAuthError("invalid_request", describeIssue(parsed.error).replace("Payload validation error: ", ""));
  const tenant = c.var.tenant;
  const config = await tenantConfig(tenant.id, tenantConfigSource(c.env, tenant.id), c.var.settings);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  if (!client.grant_types.includes(DEVICE_CODE_GRANT)) {
    throw new OAuthError("unauthorized_client", `Grant type '${DEVICE_CODE_GRANT}' not allowed for the client.`);
  }
  await authenticateClient(c, client, presented);

  const scope = (params.scope ?? "openid").split(" ").filter(Boolean).join(" ");
  const defaultAudience = (config.settings as { default_audience?: unknown }).default_audience;
  const audience = params.audience ?? (typeof defaultAudience === "string" && defaultAudience ? defaultAudience : null);
  if (audience && !config.resourceServers.some((r) => r.identifier === audience)) throw new OAuthError("access_denied", `Service not found: ${audience}`);

  const deviceCode = newDeviceCode();
  const stub = tenantObject(c.env, tenant.id);
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const userCode = newUserCode();
    const stored = await stub.deviceCodes().create({
      id: randomId("dc_"),
      device_code_hash: await hashSecret(deviceCode),
      user_code_hash: await hashSecret(userCode),
      client_id: client.client_id,
      scope,
      audience,
      interval_s: DEVICE_POLL_INTERVAL_S,
      expires_at: now() + DEVICE_CODE_TTL_S * 1000,
    });
    if (!stored) continue;
    const uri = verificationUri(tenant.issuer);
    const body = {
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: uri,
      verification_uri_complete: `${uri}?user_code=${encodeURIComponent(userCode)}`,
      expires_in: DEVICE_CODE_TTL_S,
      interval: DEVICE_POLL_INTERVAL_S,
    };
    return c.json(body, 200, { "Cache-Control": "no-store", Pragma: "no-cache" });
  }
  throw new OAuthError("temporarily_unavailable", "No user code could be drawn; try again", 503);
}
