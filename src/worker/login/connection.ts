import { DEFAULT_DATABASE_CONNECTION } from "../../shared/schemas/connections";
import type { TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { AppContext } from "../context";
import { OAuthError } from "../../shared/errors";
import { clientIn, tenantConfig } from "../tenant/config-cache";
import { tenantConfigSource } from "../tenant/stubs";
import { assertClientOrigin } from "./cors";

/** The tenant's configuration snapshot (clients, connections, branding), cached per isolate (no stub made on a hit). */
export const configOf = (c: AppContext): Promise<TenantConfig> => tenantConfig(c.var.tenant.id, tenantConfigSource(c.env, c.var.tenant.id), c.var.settings);

/** Strategy of database (username/password) connections, as the reference platform names it. */
export const DATABASE_STRATEGY = "auth0";

/**
 * The tenant's `default_directory` setting (the reference platform's) when it names one, else
 * Username-Password-Authentication.
 */
export function defaultDirectory(config: TenantConfig): string {
  const named = (config.settings as { default_directory?: unknown }).default_directory;
  return typeof named === "string" && named ? named : DEFAULT_DATABASE_CONNECTION;
}

/**
 * The database connection `name` as a client may use it: it must exist with the database strategy and, when
 * the client has an explicit connection list (`PATCH /clients/{id}/connections`, SPEC §4.2), be on it.
 * Null otherwise.
 */
export function databaseConnection(config: TenantConfig, name: string, client?: ClientRecord): ConnectionRecord | null {
  const connection = config.connections.find((c) => c.name === name && c.strategy === DATABASE_STRATEGY);
  if (!connection) return null;
  const enabled = client?.extra.enabled_connections;
  if (Array.isArray(enabled) && !enabled.map(String).includes(connection.id)) return null;
  return connection;
}

/**
 * The database connections a client offers, in its connection order (`PATCH /clients/{id}/connections`), or
 * in the tenant's order (oldest first) when it has no explicit list.
 */
export function clientDatabaseConnections(config: TenantConfig, client: ClientRecord): ConnectionRecord[] {
  const databases = config.connections.filter((c) => c.strategy === DATABASE_STRATEGY);
  const enabled = client.extra.enabled_connections;
  if (!Array.isArray(enabled)) return databases;
  return enabled.map(String).flatMap((id) => databases.find((c) => c.id === id) ?? []);
}

/**
 * The database connection the universal login pages offer an application (issue 29 point 0), whatever its
 * name: the one `connection=` named on /authorize when it is a database connection (null when the client
 * may not use it); else the tenant's default directory when the client has it; else the first database
 * connection in the client's connection order. A `connection=` naming another kind of connection leaves
 * the choice to the default rule.
 */
export function loginDatabaseConnection(config: TenantConfig, client: ClientRecord, requested?: string): ConnectionRecord | null {
  const offered = clientDatabaseConnections(config, client);
  if (requested && config.connections.some((c) => c.name === requested && c.strategy === DATABASE_STRATEGY)) {
    return offered.find((c) => c.name === requested) ?? null;
  }
  const directory = defaultDirectory(config);
  return offered.find((c) => c.name === directory) ?? offered[0] ?? null;
}

/**
 * Connection option `disable_self_service_change_password` (reference platform name): when true, the login
 * page shows no "Forgot password?" link and /u2/reset-password refuses. @default false
 */
export const isSelfServiceResetDisabled = (connection: Pick<ConnectionRecord, "options">) =>
  connection.options.disable_self_service_change_password === true;

/**
 * Connection option `disable_signup` (reference platform name): when true, only administrators create users
 * (management API, imports); /u2/signup and /dbconnections/signup refuse. @default false
 */
export const isSignupDisabled = (connection: Pick<ConnectionRecord, "options">) => connection.options.disable_signup === true;

/**
 * Connection option `requires_verified_email` (Gatehouse): when true, a user whose email is not verified
 * cannot log in with a password (SPEC §7 `EMAIL_NOT_VERIFIED`); a sign-up creates the account and asks the
 * user to verify first instead of logging in. @default false
 */
export const requiresVerifiedEmail = (connection: Pick<ConnectionRecord, "options">) =>
  connection.options.requires_verified_email === true;

/**
 * The application and database connection a `/dbconnections/*` request names (sign-up, change_password):
 * an unknown client or connection is a 400 (those are not secrets), a browser origin the client does not
 * allow is refused (cors.ts).
 */
export async function dbConnectionsTarget(c: AppContext, clientId: string, connectionName: string): Promise<{ config: TenantConfig; client: ClientRecord; connection: ConnectionRecord }> {
  const config = await configOf(c);
  const client = clientIn(config, clientId);
  if (!client) throw new OAuthError("invalid_request", `Unknown client: ${clientId}`);
  assertClientOrigin(c, client);
  const connection = databaseConnection(config, connectionName, client);
  if (!connection) throw new OAuthError("invalid_request", "connection not found");
  return { config, client, connection };
}
