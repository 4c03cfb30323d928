import { USER_STANDING_TTL_MS } from "./middleware/user-standing";

/**
 * Deployment settings read from the environment once per isolate. Every variable is listed in docs/operations.md.
 */
export interface Settings {
  /** Issuer on the apex host, verbatim (trailing slash kept). @default "http://localhost:8787/" */
  issuer: string;
  /** The apex host (`localhost:8787`), lowercased, port included. */
  apexHost: string;
  issuerProtocol: string;
  /** @default "control_plane" */
  controlPlaneTenantId: string;
  /** @default "gatehouse-control-plane" */
  controlPlaneClientId: string;
  controlPlaneClientSecret: string | undefined;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  /** Host resolution cache lifetime. @default 30000 */
  hostCacheTtlMs: number;
  /** Lifetime of a cached "no such host". @default 5000 */
  hostCacheNegativeTtlMs: number;
  /** How long a tenant's configuration snapshot is trusted before its version is rechecked. @default 2000 */
  configCacheTtlMs: number;
  /**
   * USER_STANDING_TTL_MS: how long one isolate trusts what it read of a user behind a user-shaped management
   * token (exists, not blocked, still a member with the permission; issue 25 finding 5). @default 5000
   */
  userStandingTtlMs: number;
  /** @default 300 */
  clientAssertionMaxLifetimeS: number;
  /** @default 5 */
  clientAssertionLeewayS: number;
  /** Extra origins allowed on the management API (comma separated). */
  allowedOrigins: string[];
  benchRoutes: boolean;
  /** DEV_MESSAGE_SINK=1: SMS and email go to the tenant's development sink (GET /__dev/messages, console). */
  devMessageSink: boolean;
  /** EMAIL_PROVIDER and its credentials; null when none is configured. */
  emailProvider: { kind: "sendgrid"; apiKey: string; from: string; apiBase: string } | null;
  /** @default "https://api.twilio.com" */
  twilioApiBase: string;
  /**
   * DEPLOYMENT_ROLE: `control_plane` (the registry of record: custom-domain writes reach the certificate
   * provider) or `tenant` (a per-tenant worker: writes are forwarded to CONTROL_PLANE_URL). @default "control_plane"
   */
  deploymentRole: "control_plane" | "tenant";
  /** CONTROL_PLANE_URL: where a tenant deployment forwards custom-domain writes. */
  controlPlaneUrl: string | undefined;
  /** CONTROL_PLANE_API_TOKEN: the bearer sent with forwarded writes (else the caller's own token is forwarded). */
  controlPlaneApiToken: string | undefined;
  /** CUSTOM_DOMAIN_PROVIDER (`local` or `cloudflare`) and its credentials. @default local */
  certificateProvider:
    | { kind: "local" }
    | { kind: "cloudflare"; apiToken: string; zoneId: string; apiBase: string };
  /**
   * Labels never served as tenant subdomains and refused as tenant ids (RESERVED_SUBDOMAINS, comma
   * separated, plus the host option `routing.reservedSubdomains`).
   */
  reservedSubdomains: string[];
  /**
   * Host option `routing.resolveSubdomain`: maps a subdomain label of the apex to a tenant id (null: none).
   * @default the label is the tenant id
   */
  resolveSubdomain?: (label: string) => string | null | Promise<string | null>;
  /**
   * INHERIT_FROM_CONTROL_PLANE=1 (or the host option `controlPlane.inherit`): child tenants read the control
   * plane's connections and APIs at run time where they have none of their own (never copied). @default false
   */
  inheritFromControlPlane: boolean;
  /**
   * Host option `controlPlane.clientId` (or INHERIT_CLIENT_ID): the control-plane application whose callbacks,
   * web_origins and allowed_logout_urls every child application accepts too (merged at run time, never stored).
   */
  inheritClientId?: string;
  /**
   * INHERIT_SIGNING_KEYS=1 (or the host option `controlPlane.signingKeys`): inheriting children publish the
   * control plane's signing keys (`inherited: true`, read-only) and sign with them when they have no key of
   * their own that signs. @default false
   */
  inheritSigningKeys: boolean;
  /**
   * Host option `controlPlane.sync` (SPEC "Control-plane inheritance"): changes to the control plane's
   * management API scopes and to its roles are applied to every child tenant. @default {resourceServers: true, roles: true}
   */
  sync: { resourceServers: boolean; roles: boolean };
  /** Host option `controlPlane.resolveControlPlane`: a tenant's parent, undefined opting it out of inheritance reads. */
  resolveControlPlane?: (tenant: { tenant_id: string }) => { tenantId: string; clientId?: string } | undefined | Promise<{ tenantId: string; clientId?: string } | undefined>;
  /** A tenant's configuration source (its object), for inheritance reads. */
  configSource?: (tenantId: string) => {
    getConfig(tenantId: string): Promise<import("../shared/types").TenantConfig>;
    getConfigVersion(): Promise<number>;
    hooks(): { linkParent(parentTenantId: string | null, audit: import("../shared/types").AuditContext): unknown };
  };
  /** CUSTOM_DOMAIN_CNAME_TARGET: the host customers point their domains at. @default the issuer's host name */
  customDomainTarget: string;
  /**
   * Host option `routing.baseDomain` (or BASE_DOMAIN): the host whose one-label subdomains are tenants
   * (`{label}.{baseDomain}`), port included where the service has one. @default the issuer's host (apexHost)
   */
  baseDomain?: string;
  /**
   * Host option `routing.useOrganizations`: a subdomain label names a control-plane organization whose
   * `metadata.tenant_id` is the tenant (the tenant organizations of issue 15 point 3); a label no
   * organization claims is read as the tenant id itself. False: the label is always the tenant id. A custom
   * `resolveSubdomain` takes precedence over both. @default true
   */
  useOrganizations: boolean;
  /**
   * Host option `controlPlane.requireOrganizationMatch`: a control-plane user's organization-bound token
   * reaches /api/v2/tenants only for the tenant of its organization. False: such a token (it still needs
   * read:tenants / update:tenants through its organization roles) sees every tenant. @default true
   */
  requireOrganizationMatch: boolean;
  /**
   * Host options `controlPlane.defaultPermissions` / `defaultRoles`: what a new tenant's organization offers
   * its members. Each name in `defaultRoles` is a control-plane role (created when absent); the management
   * API permissions in `defaultPermissions` are gathered on the control-plane role "Tenant administrator".
   * Their ids are recorded on the organization (`metadata.default_roles`). @default none
   */
  tenantOrganizationDefaults: { permissions: string[]; roles: string[] };
}

const cache = new WeakMap<object, Settings>();

function int(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** Parses (once per env object) the deployment settings. */
export function settingsOf(env: Env): Settings {
  const cached = cache.get(env);
  if (cached) return cached;
  const e = env as unknown as Record<string, string | undefined>;
  const issuer = e.ISSUER || "http://localhost:8787/";
  const url = new URL(issuer);
  const settings: Settings = {
    issuer,
    apexHost: url.host.toLowerCase(),
    issuerProtocol: url.protocol,
    controlPlaneTenantId: e.CONTROL_PLANE_TENANT_ID || "control_plane",
    controlPlaneClientId: e.CONTROL_PLANE_CLIENT_ID || "gatehouse-control-plane",
    controlPlaneClientSecret: e.CONTROL_PLANE_CLIENT_SECRET || undefined,
    adminEmail: e.ADMIN_EMAIL ? e.ADMIN_EMAIL.trim().toLowerCase() : undefined,
    adminPassword: e.ADMIN_PASSWORD || undefined,
    hostCacheTtlMs: int(e.HOST_CACHE_TTL_MS, 30_000),
    hostCacheNegativeTtlMs: int(e.HOST_CACHE_NEGATIVE_TTL_MS, 5_000),
    configCacheTtlMs: int(e.CONFIG_CACHE_TTL_MS, 2_000),
    userStandingTtlMs: int(e.USER_STANDING_TTL_MS, USER_STANDING_TTL_MS),
    clientAssertionMaxLifetimeS: int(e.CLIENT_ASSERTION_MAX_LIFETIME_SECONDS, 300),
    clientAssertionLeewayS: int(e.CLIENT_ASSERTION_LEEWAY_SECONDS, 5),
    allowedOrigins: (e.MANAGEMENT_ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    benchRoutes: e.BENCH_ROUTES === "1",
    devMessageSink: e.DEV_MESSAGE_SINK === "1",
    emailProvider:
      e.EMAIL_PROVIDER === "sendgrid" && e.EMAIL_API_KEY && e.EMAIL_FROM
        ? { kind: "sendgrid", apiKey: e.EMAIL_API_KEY, from: e.EMAIL_FROM, apiBase: e.EMAIL_API_BASE || "https://api.sendgrid.com" }
        : null,
    twilioApiBase: e.TWILIO_API_BASE || "https://api.twilio.com",
    deploymentRole: e.DEPLOYMENT_ROLE === "tenant" ? "tenant" : "control_plane",
    controlPlaneUrl: e.CONTROL_PLANE_URL || undefined,
    controlPlaneApiToken: e.CONTROL_PLANE_API_TOKEN || undefined,
    certificateProvider:
      e.CUSTOM_DOMAIN_PROVIDER === "cloudflare" && e.CLOUDFLARE_API_TOKEN && e.CLOUDFLARE_ZONE_ID
        ? {
            kind: "cloudflare",
            apiToken: e.CLOUDFLARE_API_TOKEN,
            zoneId: e.CLOUDFLARE_ZONE_ID,
            apiBase: e.CLOUDFLARE_API_BASE || "https://api.cloudflare.com/client/v4",
          }
        : { kind: "local" },
    customDomainTarget: (e.CUSTOM_DOMAIN_CNAME_TARGET || url.hostname).toLowerCase(),
    inheritFromControlPlane: e.INHERIT_FROM_CONTROL_PLANE === "1",
    ...(e.INHERIT_CLIENT_ID ? { inheritClientId: e.INHERIT_CLIENT_ID } : {}),
    inheritSigningKeys: e.INHERIT_SIGNING_KEYS === "1",
    sync: { resourceServers: true, roles: true },
    configSource: (tenantId) => env.TENANT.getByName(tenantId),
    reservedSubdomains: (e.RESERVED_SUBDOMAINS ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    ...(e.BASE_DOMAIN ? { baseDomain: e.BASE_DOMAIN.trim().toLowerCase() } : {}),
    useOrganizations: e.USE_ORGANIZATIONS !== "0",
    requireOrganizationMatch: e.REQUIRE_ORGANIZATION_MATCH !== "0",
    tenantOrganizationDefaults: { permissions: [], roles: [] },
  };
  cache.set(env, settings);
  return settings;
}

/** Subdomain routing host options (SPEC "Control-plane inheritance": baseDomain, useOrganizations, reservedSubdomains, resolveSubdomain). */
export interface RoutingOptions {
  /** The host whose one-label subdomains are tenants. @default the issuer's host */
  baseDomain?: string;
  /** Resolve a subdomain label through the control plane's tenant organizations first. @default true */
  useOrganizations?: boolean;
  /** Labels never served as tenant subdomains and refused as tenant ids. */
  reservedSubdomains?: string[];
  /** Maps a subdomain label to a tenant id; null: no tenant. @default the label itself */
  resolveSubdomain?: (label: string) => string | null | Promise<string | null>;
  /**
   * Control-plane inheritance (SPEC "Control-plane inheritance"): `inherit` turns read-time fallback on;
   * `resolveControlPlane` names a tenant's parent, or undefined to opt the tenant out.
   */
  controlPlane?: {
    inherit?: boolean;
    resolveControlPlane?: Settings["resolveControlPlane"];
    /** The control-plane application whose callbacks, web origins and logout URLs merge into every child's. */
    clientId?: string;
    /** Children publish (and, lacking their own, sign with) the control plane's signing keys. @default false */
    signingKeys?: boolean;
    /** What follows the control plane into every child. @default {resourceServers: true, roles: true} */
    sync?: Partial<Settings["sync"]>;
    /** @default true */
    requireOrganizationMatch?: boolean;
    /** Management API permissions offered to a new tenant organization's members (role "Tenant administrator"). */
    defaultPermissions?: string[];
    /** Control-plane role names offered to a new tenant organization's members (created when absent). */
    defaultRoles?: string[];
  };
}

const withRoutingCache = new WeakMap<RoutingOptions, WeakMap<Settings, Settings>>();

/** The deployment settings with the app's routing options folded in (once per settings object). */
export function withRouting(settings: Settings, options: RoutingOptions | undefined): Settings {
  if (!options) return settings;
  let byOptions = withRoutingCache.get(options);
  if (!byOptions) {
    byOptions = new WeakMap();
    withRoutingCache.set(options, byOptions);
  }
  const cached = byOptions.get(settings);
  if (cached) return cached;
  const merged: Settings = {
    ...settings,
    reservedSubdomains: [...settings.reservedSubdomains, ...(options.reservedSubdomains ?? []).map((s) => s.toLowerCase())],
    ...(options.resolveSubdomain ? { resolveSubdomain: options.resolveSubdomain } : {}),
    ...(options.controlPlane?.inherit !== undefined ? { inheritFromControlPlane: options.controlPlane.inherit } : {}),
    ...(options.controlPlane?.resolveControlPlane ? { resolveControlPlane: options.controlPlane.resolveControlPlane } : {}),
    ...(options.controlPlane?.clientId ? { inheritClientId: options.controlPlane.clientId } : {}),
    ...(options.controlPlane?.signingKeys !== undefined ? { inheritSigningKeys: options.controlPlane.signingKeys } : {}),
    ...(options.controlPlane?.sync ? { sync: { ...settings.sync, ...options.controlPlane.sync } } : {}),
    ...(options.baseDomain ? { baseDomain: options.baseDomain.toLowerCase() } : {}),
    ...(options.useOrganizations !== undefined ? { useOrganizations: options.useOrganizations } : {}),
    ...(options.controlPlane?.requireOrganizationMatch !== undefined ? { requireOrganizationMatch: options.controlPlane.requireOrganizationMatch } : {}),
    tenantOrganizationDefaults: {
      permissions: options.controlPlane?.defaultPermissions ?? settings.tenantOrganizationDefaults.permissions,
      roles: options.controlPlane?.defaultRoles ?? settings.tenantOrganizationDefaults.roles,
    },
  };
  byOptions.set(settings, merged);
  return merged;
}
