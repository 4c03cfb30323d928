import type { z } from "zod";
import { tokenRequestSchemas } from "../../../shared/schemas/oauth";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { TenantConfig } from "../../../shared/types";
import { authorizationCodeGrant } from "./authorization-code";
import { deviceCodeGrant } from "./device-code";
import { clientCredentialsGrant, type TokenResponse } from "./client-credentials";
import type { GrantContext } from "./context";
import { mfaOobGrant } from "./mfa-oob";
import { mfaOtpGrant } from "./mfa-otp";
import { mfaRecoveryCodeGrant } from "./mfa-recovery-code";
import { passwordlessOtpGrant } from "./passwordless-otp";
import { refreshTokenGrant } from "./refresh-token";
import { tenantObject } from "../../tenant/stubs";
import { runCredentialsExchange } from "../../actions/credentials-exchange";
import { tokenExchangeGrant } from "./token-exchange";
import type { IssuedUserTokens } from "../tokens/user-tokens";

/**
 * One grant of the token endpoint (node-oidc-provider's `lib/actions/grants/*`): its `grant_type`, the
 * parameters it accepts (validating the request and documenting it in the OpenAPI document) and its
 * handler, one file each. Add a grant here; the endpoint, discovery and the OpenAPI document follow.
 */
export interface Grant {
  grantType: string;
  parameters: z.ZodType<Record<string, unknown>>;
  /** The token response body (RFC 6749 §5.1); the endpoint adds `Cache-Control: no-store`. */
  handler: (ctx: GrantContext, client: ClientRecord) => Promise<TokenResponse | IssuedUserTokens>;
  /**
   * Whether the tenant can use the grant at all (absent: always). A grant unavailable in a tenant is
   * `unsupported_grant_type` there and missing from its discovery document (issue 33 point 6).
   */
  isAvailable?: (config: TenantConfig) => boolean;
}

/** The passwordless grant needs a passwordless (`email` or `sms`) connection in the tenant. */
const hasPasswordlessConnection = (config: TenantConfig) => config.connections.some((c) => c.strategy === "email" || c.strategy === "sms");

const GRANT_LIST: readonly Grant[] = [
  {
    grantType: "client_credentials",
    parameters: tokenRequestSchemas.client_credentials,
    handler: async (ctx, client) => {
      const issued = await clientCredentialsGrant(
        ctx.params,
        client,
        ctx.config,
        ctx.c.get("tenant"),
        ctx.signer,
        undefined,
        (exchange) => runCredentialsExchange(ctx.c, ctx.config, client, exchange),
        ctx.dpopJkt,
      );
      // SPEC §6.1: credentials-exchange webhooks go through the outbox; nothing is written without one.
      if (ctx.config.hookTriggers.includes("credentials-exchange")) {
        const audience = ctx.params.audience ?? (ctx.config.settings.default_audience as string);
        await tenantObject(ctx.c.env, ctx.c.get("tenant").id).recordCredentialsExchange({ client_id: client.client_id, audience, scope: issued.scope ?? "" });
      }
      return issued;
    },
  },
  {
    grantType: "authorization_code",
    parameters: tokenRequestSchemas.authorization_code,
    handler: authorizationCodeGrant,
  },
  {
    grantType: "refresh_token",
    parameters: tokenRequestSchemas.refresh_token,
    handler: refreshTokenGrant,
  },
  {
    grantType: "urn:ietf:params:oauth:grant-type:token-exchange",
    parameters: tokenRequestSchemas["urn:ietf:params:oauth:grant-type:token-exchange"],
    handler: tokenExchangeGrant,
  },
  {
    grantType: "http://auth0.com/oauth/grant-type/passwordless/otp",
    parameters: tokenRequestSchemas["http://auth0.com/oauth/grant-type/passwordless/otp"],
    handler: passwordlessOtpGrant,
    isAvailable: hasPasswordlessConnection,
  },
  // RFC 8628: the device polls for the tokens of the login approved at /activate (../device/).
  {
    grantType: "urn:ietf:params:oauth:grant-type:device_code",
    parameters: tokenRequestSchemas["urn:ietf:params:oauth:grant-type:device_code"],
    handler: deviceCodeGrant,
  },
  // Complete a token request answered `mfa_required` (issue 25 finding 6; ./mfa-token.ts).
  {
    grantType: "http://auth0.com/oauth/grant-type/mfa-otp",
    parameters: tokenRequestSchemas["http://auth0.com/oauth/grant-type/mfa-otp"],
    handler: mfaOtpGrant,
  },
  {
    grantType: "http://auth0.com/oauth/grant-type/mfa-oob",
    parameters: tokenRequestSchemas["http://auth0.com/oauth/grant-type/mfa-oob"],
    handler: mfaOobGrant,
  },
  {
    grantType: "http://auth0.com/oauth/grant-type/mfa-recovery-code",
    parameters: tokenRequestSchemas["http://auth0.com/oauth/grant-type/mfa-recovery-code"],
    handler: mfaRecoveryCodeGrant,
  },
];

/** The registered grants by type. A type not in this map is `unsupported_grant_type`, never a default. */
export const GRANTS: ReadonlyMap<string, Grant> = new Map(GRANT_LIST.map((grant) => [grant.grantType, grant]));

/** Grant types this server implements, in registration order. */
export const SUPPORTED_GRANTS: readonly string[] = GRANT_LIST.map((grant) => grant.grantType);

/** The grant types a tenant can use, in registration order (its discovery's `grant_types_supported`). */
export function grantsAvailableIn(config: TenantConfig): string[] {
  return GRANT_LIST.filter((grant) => !grant.isAvailable || grant.isAvailable(config)).map((grant) => grant.grantType);
}
