import { z } from "zod";
import type { Json } from "../types/json";

/**
 * Connection fields shown top-level but stored inside the `options` column (the table has no columns for
 * them); options given by a caller never set them.
 */
export const CONNECTION_OPTION_FIELDS = ["display_name", "enabled_clients", "metadata", "is_domain_connection", "realms", "show_as_button"] as const;

/**
 * Option keys that hold credentials: stored encrypted in `secrets_enc` (SPEC §5.12), never in `options`.
 * `configuration`: a custom database's settings for its scripts (issue 32), sealed like action secrets.
 */
export const CONNECTION_SECRET_OPTIONS = ["client_secret", "twilio_token", "configuration"] as const;

/** The reference platform's connection-name rule (e.g. `Username-Password-Authentication`). */
const name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/, "name must be letters, digits and inner hyphens");

const strategy = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, "strategy must be lowercase letters, digits and hyphens (e.g. auth0)");

const options = z.record(z.string(), z.json());
const displayName = z.string().trim().min(1).max(128);
const enabledClients = z.array(z.string().min(1).max(64)).max(1000);
/** The reference platform's `realms` (documented as settable on create and update); default: the connection's name. */
const realms = z.array(z.string().min(1).max(255)).min(1).max(10);
const metadata = z
  .record(z.string().min(1).max(255), z.string().max(255))
  .refine((m) => Object.keys(m).length <= 10, "metadata allows at most 10 properties");

/** POST /api/v2/connections. Unknown properties are refused. */
export const createConnectionBody = z.strictObject({
  name,
  strategy,
  options: options.optional(),
  display_name: displayName.optional(),
  enabled_clients: enabledClients.optional(),
  metadata: metadata.optional(),
  is_domain_connection: z.boolean().optional(),
  realms: realms.optional(),
  /** Enterprise connections (issue 29 point 0): whether the login page shows its button. @default true */
  show_as_button: z.boolean().optional(),
});

/** PATCH /api/v2/connections/{id}: name and strategy are immutable; `options` replaces the whole object. */
export const updateConnectionBody = z
  .strictObject({
    options,
    display_name: displayName.nullable(),
    enabled_clients: enabledClients,
    metadata: metadata.nullable(),
    is_domain_connection: z.boolean(),
    realms: realms.nullable(),
    show_as_button: z.boolean(),
  })
  .partial();

/**
 * PATCH /api/v2/connections/{id}/clients: which clients to turn the connection on (`status: true`) or off
 * for; 1 to 50 items per request, as the reference platform allows.
 */
export const connectionClientsBody = z
  .array(z.strictObject({ client_id: z.string().min(1).max(64), status: z.boolean() }))
  .min(1, "give at least one {client_id, status}")
  .max(50, "at most 50 clients per request");

export type ConnectionClientChange = z.infer<typeof connectionClientsBody>[number];

/** The database connection every tenant starts with (reference platform default). */
export const DEFAULT_DATABASE_CONNECTION = "Username-Password-Authentication";

export interface ConnectionRecord {
  id: string;
  name: string;
  strategy: string;
  /** Public options, plus the top-level fields kept here (display_name, enabled_clients, metadata ...). */
  options: Record<string, Json>;
  /** Credential options (client_secret ...) as one encrypted JSON object; the worker opens it. */
  secrets_enc: string | null;
  /**
   * The clients that have this connection enabled, read from the one store (each client's connection list,
   * SPEC §4.2); set by the object on every read, absent on rows of other origins (inherited connections).
   */
  enabled_clients?: string[];
  created_at: string;
  updated_at: string;
}

/** A connection as the worker prepared it: credential options already split out and encrypted. */
export interface NewConnection {
  id: string;
  name: string;
  strategy: string;
  options: Record<string, Json>;
  secrets_enc: string | null;
}

/**
 * PATCH /connections/{id}: `options` (with `secrets_enc`) replaces the whole options object, as the reference
 * platform does; the top-level fields kept in options are replaced one by one (null removes).
 */
export interface ConnectionPatch {
  options?: Record<string, Json>;
  secrets_enc?: string | null;
  fields?: Record<string, Json | null>;
}
