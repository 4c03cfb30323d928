import type { MiddlewareHandler } from "hono";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { errors } from "../../shared/errors";
import { MANAGEMENT_AUDIENCE } from "../../shared/scopes";
import type { AppEnv } from "../context";
import { explicitTenant } from "../routing/resolve-tenant";
import { memoized } from "../tenant/config-cache";
import { publicJwks } from "../tenant/signing";
import { directory, tenantExists, tenantObject } from "../tenant/stubs";

/**
 * Host configuration hooks (SPEC §5.3). Each receives the token's tenant_id and returns extra values to
 * accept; the default accepts none (strict), and returning an empty list refuses anything extra.
 */
export interface ManagementAuthOptions {
  additionalIssuers?: (tenantId: string) => string[] | Promise<string[]>;
  additionalManagementAudiences?: (tenantId: string) => string[] | Promise<string[]>;
}

const BEARER = /^Bearer ([A-Za-z0-9\-_.~+/]+=*)$/;

/**
 * Management authentication (SPEC §5.1-5.4): no or malformed Bearer header is 401, every other refusal 403.
 * Sets `auth` (the caller) and `tenant` (the target: explicit header/host, else the token's own tenant).
 */
export function managementAuth(options: ManagementAuthOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (!header) throw errors.missingToken();
    const match = BEARER.exec(header.trim());
    if (!match?.[1]) throw errors.malformedAuthorization();
    const token = match[1];
    const settings = c.var.settings;

    let tenantId: unknown;
    try {
      tenantId = decodeJwt(token).tenant_id;
    } catch {
      throw errors.invalidToken();
    }
    if (typeof tenantId !== "string" || !(await tenantExists(c.env, settings, tenantId))) {
      throw errors.invalidToken();
    }
    const source = tenantObject(c.env, tenantId);
    const keys = await memoized(tenantId, source, settings, "jwks-verifier", (config) => createLocalJWKSet(publicJwks(config) as never));
    const issuers = [settings.issuer, `${settings.issuerProtocol}//${tenantId}.${settings.apexHost}/`];
    const audiences = [MANAGEMENT_AUDIENCE];
    if (options.additionalIssuers) issuers.push(...(await options.additionalIssuers(tenantId)));
    if (options.additionalManagementAudiences) audiences.push(...(await options.additionalManagementAudiences(tenantId)));

    let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
    try {
      ({ payload } = await jwtVerify(token, keys, { issuer: issuers, audience: audiences, algorithms: ["RS256", "ES256"] }));
    } catch {
      throw errors.invalidToken();
    }
    const isControlPlane = tenantId === settings.controlPlaneTenantId;
    const target = (await explicitTenant(c.req.raw, settings, directory(c.env, settings))) ?? {
      id: tenantId,
      issuer: settings.issuer,
      via: "token" as const,
      customDomain: null,
    };
    // SPEC §5.4: acting on another tenant needs a control-plane token.
    if (target.id !== tenantId && !isControlPlane) throw errors.crossTenant();
    c.set("auth", {
      tenantId,
      isControlPlane,
      scopes: new Set(typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : []),
      subject: String(payload.sub ?? ""),
      clientId: typeof payload.azp === "string" ? payload.azp : null,
    });
    c.set("tenant", target);
    await next();
  };
}

/** Requires one scope; a missing scope is 403. */
export function requireScope(scope: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.var.auth.scopes.has(scope)) throw errors.insufficientScope(scope);
    await next();
  };
}
