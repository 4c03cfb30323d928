import type { AttackProtection } from "../schemas/attack-protection";
import type { BoundAction } from "../schemas/actions";
import type { GuardianSettings } from "../schemas/guardian";
import type { Branding } from "../schemas/branding";
import type { BrandingTheme } from "../schemas/branding";
import type { ClientGrantRecord } from "../schemas/client-grants";
import type { ClientRecord } from "../schemas/clients";
import type { ConnectionRecord } from "../schemas/connections";
import type { PromptsRecord } from "../i18n/prompts-schema";
import type { ResourceServerRecord } from "../schemas/resource-servers";
import type { NewSigningKey, SigningKeyRecord } from "../schemas/signing-keys";

/** The tenant configuration snapshot every token request reads (its records live in their resources' modules). */

/**
 * Everything a token request needs, read in one RPC and cached per isolate (ARCHITECTURE.md §4), stamped
 * with the tenant object's configuration version.
 */
export interface TenantConfig {
  version: number;
  tenantId: string;
  settings: Record<string, unknown>;
  signingKeys: SigningKeyRecord[];
  resourceServers: ResourceServerRecord[];
  clients: ClientRecord[];
  clientGrants: ClientGrantRecord[];
  connections: ConnectionRecord[];
  branding: Branding;
  /** The universal-login theme (POST /api/v2/branding/themes), applied to every login page. */
  brandingTheme?: BrandingTheme | null;
  /** The universal-login page template (Liquid, PUT /api/v2/branding/templates/universal-login). */
  loginTemplate?: string | null;
  /** Triggers with at least one enabled webhook, so hot paths only record hook events someone receives. */
  hookTriggers: string[];
  /** Lockout and suspicious-IP throttling settings (GET/PATCH /api/v2/attack-protection/*). */
  attackProtection: AttackProtection;
  /** Triggers with an enabled `account-linking` template hook (SPEC §6.2). */
  linkingTriggers: string[];
  /** Each trigger's bound actions in execution order (their deployed versions; no code). */
  actions: Record<string, BoundAction[]>;
  /** MFA factors, policies and SMS provider (GET/PUT /api/v2/guardian/*), read by the login flow. */
  guardian: GuardianSettings;
  /** The parent tenant whose webhooks this tenant's relay also calls (the link the worker keeps; issue 15). */
  inheritsFrom?: string | null;
  /** Universal-login prompts: settings, custom text and partials (GET/PATCH /api/v2/prompts ...; issue 29 point 3). */
  prompts?: PromptsRecord;
}

/** What the worker prepared (keys generated, secrets encrypted, passwords hashed) for an idempotent seed. */
export interface TenantSeed {
  tenantId: string;
  /** Null when the tenant already has a key that signs. */
  signingKey: NewSigningKey | null;
  managementAudience: string;
  managementScopes: string[];
  /** The control plane's M2M client; absent for child tenants. */
  controlPlaneClient?: { client_id: string; name: string; client_secret_enc: string };
  admin?: { email: string; password_hash: string };
  /**
   * The admin console's application on the control plane (issue 30), with the operator roles; `adminEmail`
   * names the user who gets the Admin role when the roles are first created.
   */
  console?: { client_id: string; name: string; client_secret_enc: string; callbacks: string[]; logout_urls: string[]; adminEmail?: string };
}
