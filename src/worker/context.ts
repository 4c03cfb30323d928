import type { Context } from "hono";
import type { TenantContext } from "./routing/resolve-tenant";
import type { Settings } from "./settings";

/** What the management auth middleware established about the caller. */
export interface ManagementAuth {
  /** The tenant that issued the token. */
  tenantId: string;
  /**
   * `client`: minted by client_credentials; `user`: issued to a user (held to the current-user rules);
   * `operator`: a control-plane user's token issued to the admin console (issue 30), holding the management
   * scopes that are the user's permissions there now.
   */
  kind: "client" | "user" | "operator";
  /** A client token of the control-plane tenant, or an operator's token (may act on other tenants). */
  isControlPlane: boolean;
  scopes: Set<string>;
  subject: string;
  clientId: string | null;
  /** The token's `org_id` claim (a login through an organization), else null. */
  organizationId: string | null;
  /**
   * A control-plane user's token issued through one of its tenant organizations (issue 15 point 3): it may
   * hold read:tenants / update:tenants, and reaches only the tenant of that organization.
   */
  organizationBound: boolean;
}

/** Hono environment shared by every route. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    settings: Settings;
    tenant: TenantContext;
    auth: ManagementAuth;
    /** Host options of the action runtime (createApp options). */
    actionOptions?: { unsafeAllowAzpCustomClaim?: boolean; userLinkingMode?: "builtin" | "template" | "off" };
    /** Tenant lifecycle host options (createApp onTenantCreating ... onTenantDeleted). */
    tenantHooks?: import("./tenant/lifecycle").TenantLifecycleHooks;
    /** Subdomain routing host options (createApp `routing`). */
    routing?: import("./settings").RoutingOptions;
    /** The validated JSON body of a management write, for its audit event (redacted in the object). */
    requestBody?: unknown;
  };
};

export type AppContext = Context<AppEnv>;
