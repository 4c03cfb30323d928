import type { TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { ConnectionRecord } from "../../../shared/schemas/connections";
import { isSelfServiceResetDisabled, isSignupDisabled, loginDatabaseConnection } from "../connection";
import { organizationConnection } from "../organization";
import type { LoginTransaction } from "../transaction";

/**
 * What the universal login offers an application (issue 29 point 0): its database connection (the rule in
 * ../connection.ts), its passwordless connections (`email`, `sms`) and its enterprise connections (OpenID
 * Connect, `oidc`), each enabled for the client (its connection list, or every connection when it has none)
 * and, in an organization, for the organization.
 */

/** Passwordless strategies the login page offers (a connection's name equals its strategy, as the reference's). */
export const PASSWORDLESS_STRATEGIES = ["email", "sms"] as const;
export type PasswordlessStrategy = (typeof PASSWORDLESS_STRATEGIES)[number];
/** Enterprise strategies with a login flow. */
export const OIDC_STRATEGY = "oidc";

/** The connections a client may use, in its connection order, or the tenant's when it has no list. */
export function clientConnections(config: TenantConfig, client: ClientRecord): ConnectionRecord[] {
  const enabled = client.extra.enabled_connections;
  if (!Array.isArray(enabled)) return config.connections;
  return enabled.map(String).flatMap((id) => config.connections.find((c) => c.id === id) ?? []);
}

export const isPasswordless = (c: ConnectionRecord): c is ConnectionRecord & { strategy: PasswordlessStrategy } =>
  (PASSWORDLESS_STRATEGIES as readonly string[]).includes(c.strategy) && c.name === c.strategy;

export interface DatabaseOffer {
  connection: ConnectionRecord;
  canSignup: boolean;
  canReset: boolean;
}

export interface LoginOffer {
  database: DatabaseOffer | null;
  passwordless: (ConnectionRecord & { strategy: PasswordlessStrategy })[];
  enterprise: ConnectionRecord[];
}

/** The connections of this login transaction, as the pages offer them. */
export function loginOffer(t: Pick<LoginTransaction, "config" | "client" | "organization" | "loginSession">): LoginOffer {
  const request = t.loginSession.request;
  const inOrganization = (c: ConnectionRecord) => organizationConnection(t.organization, c.name, request);
  const database = loginDatabaseConnection(t.config, t.client, request.connection);
  const databaseIn = database ? inOrganization(database) : null;
  const usable = clientConnections(t.config, t.client).filter((c) => inOrganization(c).enabled);
  return {
    database:
      database && databaseIn?.enabled
        ? { connection: database, canSignup: !isSignupDisabled(database) && databaseIn.signup, canReset: !isSelfServiceResetDisabled(database) }
        : null,
    passwordless: usable.filter(isPasswordless),
    enterprise: usable.filter((c) => c.strategy === OIDC_STRATEGY),
  };
}

/** The connection `connection=` on /authorize named when it is a passwordless or enterprise one this login may use. */
export function requestedConnection(offer: LoginOffer, requested: string | undefined): ConnectionRecord | null {
  if (!requested) return null;
  return [...offer.passwordless, ...offer.enterprise].find((c) => c.name === requested) ?? null;
}

/** The label of an enterprise connection's button: its display name, else its name. */
export const connectionLabel = (c: ConnectionRecord) => (typeof c.options.display_name === "string" && c.options.display_name) || c.name;

/** Whether the login page shows the enterprise connection's button (option `show_as_button`, default true). */
export const showsAsButton = (c: ConnectionRecord) => c.options.show_as_button !== false;
