import type { MiddlewareHandler } from "hono";
import { decodeJwt, jwtVerify } from "jose";
import { problem } from "../../shared/errors";
import { CONSOLE_CLIENT_ID } from "../../shared/console";
import { isCurrentUserScope, MANAGEMENT_AUDIENCE, ORGANIZATION_TENANT_SCOPES } from "../../shared/scopes";
import type { AppEnv } from "../context";
import { explicitTenant, issuerFor, resolveHost, type TenantDirectory } from "../routing/resolve-tenant";
import type { Settings } from "../settings";
import { parseAuthorization } from "../http/bearer";
import { managementDpop } from "./management-dpop";
import { jwksVerifier } from "../tenant/keys";
import { directory, tenantDeployment, tenantExists, tenantObject } from "../tenant/stubs";
import { copyIssuer } from "../deploy/provisioner";
import { operatorScopes, standingScopes } from "./user-standing";

/**
 * Host configuration hooks (SPEC §5.3). Each receives the token's tenant_id and returns extra values to
 * accept; the default accepts none (strict), and returning an empty list refuses anything extra.
 */
export interface ManagementAuthOptions {
  additionalIssuers?: (tenantId: string) => string[] | Promise<string[]>;
  additionalManagementAudiences?: (tenantId: string) => string[] | Promise<string[]>;
}

/**
 * Management authentication (SPEC §5.1-5.4): no or malformed Bearer header is 401, every other refusal 403.
 * Sets `auth` (the caller) and `tenant` (the target: explicit header/host, else the token's own tenant).
 */
export function managementAuth(options: ManagementAuthOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (!header) throw problem("missing_token");
    const presented = parseAuthorization(header);
    if (!presented) throw problem("invalid_authorization_header");
    const token = presented.token;
    const settings = c.var.settings;

    let tenantId: unknown;
    let claimedIssuer: unknown;
    try {
      ({ tenant_id: tenantId, iss: claimedIssuer } = decodeJwt(token));
    } catch {
      throw problem("invalid_token");
    }
    if (typeof tenantId !== "string" || !(await tenantExists(c.env, settings, tenantId))) {
      throw problem("invalid_token");
    }
    const source = tenantObject(c.env, tenantId);
    const { keys, algorithms } = await jwksVerifier(c.env, settings, tenantId);
    const issuers = [settings.issuer, `${settings.issuerProtocol}//${tenantId}.${settings.apexHost}/`];
    const audiences = [MANAGEMENT_AUDIENCE];
    // A token the tenant issued on one of its ready custom domains (iss `https://<domain>/`, SPEC §5.6).
    const domainIssuer = await customDomainIssuer(claimedIssuer, tenantId, settings, directory(c.env, settings));
    if (domainIssuer) issuers.push(domainIssuer);
    if (options.additionalIssuers) issuers.push(...(await options.additionalIssuers(tenantId)));
    if (options.additionalManagementAudiences) audiences.push(...(await options.additionalManagementAudiences(tenantId)));

    let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
    try {
      ({ payload } = await jwtVerify(token, keys, { issuer: issuers, audience: audiences, algorithms }));
    } catch {
      throw problem("invalid_token");
    }
    // RFC 9449 §7: a DPoP-bound token needs the DPoP scheme and a proof of its key; a bearer token, the Bearer scheme.
    await managementDpop(c, presented, payload, tenantId);
    // RFC 7009: a token revoked at /oauth/revoke is refused here too (looked up in the issuing tenant only).
    if (typeof payload.jti === "string" && (await source.revocations().isRevoked(payload.jti))) {
      throw problem("revoked_token");
    }
    const operator = isOperatorToken(payload, tenantId, settings.controlPlaneTenantId);
    const kind = isClientToken(payload) ? "client" : operator ? "operator" : "user";
    // Defence in depth (issue 6): a token issued to a user is held to the current-user rules whatever
    // scopes it carries, and never acts across tenants, even when its tenant is the control plane. Issue 30: an
    // operator's console token is the exception; its scopes are its control-plane permissions, read again here.
    const granted = typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : [];
    const organizationId = typeof payload.org_id === "string" && payload.org_id ? payload.org_id : null;
    // Another exception (issue 15 point 3): a control-plane user's token issued through a tenant organization
    // keeps the tenants scopes it was issued; routes confine it to that organization's tenant.
    const organizationBound = kind === "user" && organizationId !== null && tenantId === settings.controlPlaneTenantId;
    const userScope = (s: string) => isCurrentUserScope(s) || (organizationBound && ORGANIZATION_TENANT_SCOPES.includes(s));
    const subject = String(payload.sub ?? "");
    const boundOrganization = organizationBound ? organizationId : null;
    // Issue 25 finding 5: a user's token is only as good as its user is now (exists, not blocked, and for an
    // organization-bound token still a member holding each tenants scope), read at each request through a
    // cache of a few seconds; the token's signature and lifetime alone never outlive a removal or a block.
    const scopes =
      kind === "client"
        ? granted
        : kind === "operator"
          ? // Issue 30: the console's token holds only what the operator's roles on the control plane grant now.
            await operatorScopes({ tenantId, userId: subject, organizationId: null, operator: true }, granted, settings.userStandingTtlMs, () =>
              source.userAuthorization().operatorStanding(subject, MANAGEMENT_AUDIENCE),
            )
          : await standingScopes(
            { tenantId, userId: subject, organizationId: boundOrganization },
            granted.filter(userScope),
            settings.userStandingTtlMs,
            () => source.userAuthorization().managementStanding(subject, boundOrganization, MANAGEMENT_AUDIENCE),
          );
    const isControlPlane = (kind === "client" && tenantId === settings.controlPlaneTenantId) || kind === "operator";
    const target = (await explicitTenant(c.req.raw, settings, directory(c.env, settings))) ?? {
      id: tenantId,
      issuer: settings.issuer,
      via: "token" as const,
      customDomain: null,
    };
    // SPEC §5.4: acting on another tenant needs a control-plane token.
    if (target.id !== tenantId && !isControlPlane) throw problem("cross_tenant_forbidden");
    // Issue 28 point 7: a tenant with its own deployment is served there, never by a stand-in here.
    if ((target.via === "header" || target.via === "query") && target.id !== settings.controlPlaneTenantId) {
      if ((await tenantDeployment(c.env, settings, target.id)) === "wfp") {
        throw problem("tenant_served_by_copy", { tenant_id: target.id, host: new URL(copyIssuer(c.env, target.id)).host });
      }
    }
    c.set("auth", {
      tenantId,
      kind,
      isControlPlane,
      scopes: new Set(scopes),
      subject,
      clientId: typeof payload.azp === "string" ? payload.azp : null,
      organizationId,
      organizationBound,
    });
    c.set("tenant", target);
    await next();
  };
}

/**
 * The token's issuer when it is one the tenant has on another host of its own, else null: a ready custom
 * domain, or a subdomain of the base domain that resolves to it (a label that is not its id, through
 * `useOrganizations` or `resolveSubdomain`).
 */
async function customDomainIssuer(
  iss: unknown,
  tenantId: string,
  settings: Settings,
  registry: TenantDirectory,
): Promise<string | null> {
  if (typeof iss !== "string") return null;
  let host: string;
  try {
    host = new URL(iss).host.toLowerCase();
  } catch {
    return null;
  }
  const match = await resolveHost(host, settings, registry);
  if (!match || match.tenantId !== tenantId) return null;
  // A custom domain of the tenant, or a subdomain that resolves to it (baseDomain, useOrganizations).
  return issuerFor(match.via, host, settings, match.customDomain) === iss ? iss : null;
}

/**
 * A token minted by the client_credentials grant: `gty` says so and `sub` is `<client_id>@clients`.
 * Anything else (authorization code, implicit, token exchange of a user's token ...) is a user's token.
 */
function isClientToken(payload: { gty?: unknown; sub?: unknown }): boolean {
  return payload.gty === "client-credentials" && typeof payload.sub === "string" && payload.sub.endsWith("@clients");
}

/**
 * An operator's console token (issue 30): issued by the control plane to the console's own application, to a
 * user, through no organization. The issuance rules (isConsoleOperatorGrant) put management scopes only in
 * such a token; the scopes are checked again against the user's permissions at each request.
 */
function isOperatorToken(payload: Record<string, unknown>, tenantId: string, controlPlaneTenantId: string): boolean {
  return tenantId === controlPlaneTenantId && payload.azp === CONSOLE_CLIENT_ID && payload.gty === undefined && !payload.org_id;
}

/** How a route may also be reached with a user's token: one current-user scope, on the user's own id. */
export interface CurrentUserAccess {
  scope: string;
  /** The path parameter that must equal the token's `sub`. */
  param: string;
}

/**
 * Requires the route's scope, or one of its narrower `alsoScopes` (403 otherwise; the handler limits what a
 * narrower scope may do). A user's token never satisfies a management scope; it
 * reaches only routes that declare current-user access, holding that scope, on its own user id (any other
 * target is 403).
 */
export function requireScope(scope: string, currentUser?: CurrentUserAccess, alsoScopes: readonly string[] = []): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = c.var.auth;
    if (auth.kind === "user") {
      const allowed =
        (currentUser && auth.scopes.has(currentUser.scope) && c.req.param(currentUser.param) === auth.subject) ||
        // A control-plane user's organization-bound token, on a tenants route (the handler checks the tenant).
        (auth.organizationBound && ORGANIZATION_TENANT_SCOPES.includes(scope) && auth.scopes.has(scope));
      if (!allowed) throw problem("insufficient_scope", { scope: currentUser ? `${scope}, ${currentUser.scope}` : scope });
    } else if (!auth.scopes.has(scope) && !alsoScopes.some((s) => auth.scopes.has(s))) {
      throw problem("insufficient_scope", { scope: [scope, ...alsoScopes].join(", ") });
    }
    await next();
  };
}
