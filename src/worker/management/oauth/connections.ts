import { customDatabaseRefusal } from "../../../shared/actions/db-scripts";
import { z } from "zod";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import { clientConnectionsBody } from "../../../shared/schemas/clients";
import {
  CONNECTION_OPTION_FIELDS,
  CONNECTION_SECRET_OPTIONS,
  createConnectionBody,
  updateConnectionBody,
} from "../../../shared/schemas/connections";
import type { Json } from "../../../shared/types";
import type { ConnectionRecord } from "../../../shared/schemas/connections";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { inheritedItems, refuseInherited, withInherited } from "../inherited";
import { LIST_QUERY, listResponse } from "../list-response";
import { targetTenant } from "../tenant-scoped";
import { egressPolicyFrom } from "../../../shared/egress-policy";
import { oidcOptionsRefusal } from "./oidc-options";


const isSecret = (key: string) => (CONNECTION_SECRET_OPTIONS as readonly string[]).includes(key);
const isField = (key: string) => (CONNECTION_OPTION_FIELDS as readonly string[]).includes(key);

/**
 * Splits caller options into what is stored in clear and the credentials, encrypted here in the worker
 * (SPEC §5.12). Keys naming top-level fields are dropped: only the fields themselves set those.
 */
async function sealOptions(c: AppContext, id: string, given: Record<string, Json>) {
  const options: Record<string, Json> = {};
  const secrets: Record<string, Json> = {};
  for (const [key, value] of Object.entries(given)) {
    if (isSecret(key)) secrets[key] = value;
    else if (!isField(key)) options[key] = value;
  }
  if (isObject(secrets.configuration)) secrets.configuration = await openConfiguration(c, id, secrets.configuration);
  if (typeof secrets.client_secret === "string") secrets.client_secret = await openShown(await fieldCipher(c.env.ENCRYPTION_KEY), id, "client_secret", secrets.client_secret);
  const secretsEnc = Object.keys(secrets).length
    ? await (await fieldCipher(c.env.ENCRYPTION_KEY)).encrypt(JSON.stringify(secrets), encryptionContext.connectionSecrets(id))
    : null;
  return { options, secretsEnc };
}

const isObject = (value: Json | undefined): value is Record<string, Json> => typeof value === "object" && value !== null && !Array.isArray(value);

type Cipher = Awaited<ReturnType<typeof fieldCipher>>;
/** The context a credential shown sealed is encrypted under: this connection's secrets, then where the value sits. */
const shownContext = (id: string, path: string) => `${encryptionContext.connectionSecrets(id)}:${path}`;

/**
 * A credential as the management API shows it: encrypted under this connection and the value's place
 * ({@link shownContext}), so a read never hands the credential out, and {@link openShown} turns the value sent
 * back as read into the stored one (read-then-write tools such as deploy-cli keep working).
 */
async function sealShown(cipher: Cipher, id: string, path: string, value: Json): Promise<string> {
  return cipher.encrypt(JSON.stringify(value), shownContext(id, path));
}

/** A value a caller sent: one this connection showed at this place opens to the stored value; anything else is a new value. */
async function openShown(cipher: Cipher, id: string, path: string, value: Json): Promise<Json> {
  if (typeof value !== "string" || !value.startsWith("enc:v1:")) return value;
  try {
    return JSON.parse(await cipher.decrypt(value, shownContext(id, path))) as Json;
  } catch {
    return value;
  }
}

/**
 * A custom database's `configuration` as the management API shows it (issue 32): each value sealed
 * ({@link sealShown}), as the reference platform answers them, so a read never hands out the legacy store's
 * credentials; a value sent back as read keeps the stored one ({@link openConfiguration}).
 */
async function sealedConfiguration(c: AppContext, id: string, configuration: Record<string, Json>): Promise<Record<string, Json>> {
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(configuration)) out[key] = await sealShown(cipher, id, `configuration:${key}`, value);
  return out;
}

/** The configuration a caller sent, each value through {@link openShown}. */
async function openConfiguration(c: AppContext, id: string, configuration: Record<string, Json>): Promise<Record<string, Json>> {
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(configuration)) out[key] = await openShown(cipher, id, `configuration:${key}`, value);
  return out;
}

/**
 * Strategies whose `client_secret` is shown sealed (issue 29 point 4): an enterprise OpenID Connect
 * connection's secret is the tenant's credential at its identity provider. Social connections keep the
 * reference platform's answer (their secret shown as stored).
 */
const SEALED_CLIENT_SECRET = new Set(["oidc"]);

/** The top-level fields the caller set (null clears one on update). */
function topLevelFields(body: Partial<Record<(typeof CONNECTION_OPTION_FIELDS)[number], Json | null | undefined>>) {
  const fields: Record<string, Json | null> = {};
  for (const field of CONNECTION_OPTION_FIELDS) if (body[field] !== undefined) fields[field] = body[field] as Json | null;
  return fields;
}

/** A connection in the reference platform's shape: stored fields lifted out of options, credentials opened. */
async function present(c: AppContext, connection: ConnectionRecord) {
  const options: Record<string, Json> = {};
  const fields: Record<string, Json> = {};
  for (const [key, value] of Object.entries(connection.options)) (isField(key) ? fields : options)[key] = value;
  const secrets = connection.secrets_enc
    ? JSON.parse(await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(connection.secrets_enc, encryptionContext.connectionSecrets(connection.id)))
    : {};
  if (isObject(secrets.configuration)) secrets.configuration = await sealedConfiguration(c, connection.id, secrets.configuration);
  if (SEALED_CLIENT_SECRET.has(connection.strategy) && typeof secrets.client_secret === "string") {
    secrets.client_secret = await sealShown(await fieldCipher(c.env.ENCRYPTION_KEY), connection.id, "client_secret", secrets.client_secret);
  }
  return {
    id: connection.id,
    name: connection.name,
    ...(fields.display_name === undefined ? {} : { display_name: fields.display_name }),
    strategy: connection.strategy,
    options: { ...options, ...secrets },
    // The one store is the clients' connection lists (issue 28 point 1); a copy older code left in options is not read.
    enabled_clients: connection.enabled_clients ?? [],
    is_domain_connection: fields.is_domain_connection ?? false,
    // Shown as set (issue 28 point 6); the password-realm grant and login name a connection by its name.
    realms: fields.realms ?? [connection.name],
    ...(fields.metadata === undefined ? {} : { metadata: fields.metadata }),
    ...(fields.show_as_button === undefined ? {} : { show_as_button: fields.show_as_button }),
    // Read from the control plane at run time (issue 15 point 2): shown, never writable here.
    ...((connection as { inherited?: boolean }).inherited ? { inherited: true } : {}),
  };
}

/** SPEC §4.2 shape, plus `connections` (the reference platform SDK's field) in the same order. */
function presentClientConnections(list: ConnectionRecord[]) {
  return {
    enabled_connections: list.map((c) => ({ connection_id: c.id, connection: { id: c.id, name: c.name, strategy: c.strategy } })),
    connections: list.map((c) => ({ id: c.id, name: c.name, strategy: c.strategy, realms: [c.name] })),
  };
}

/** 400 when a database connection's custom database options cannot run (issue 32: types, scripts that do not compile). */
function refuseCustomDatabase(c: AppContext, strategy: string, options: Record<string, Json> | undefined): void {
  // Issue 29 point 0: an enterprise OpenID Connect connection's options (client_id, issuer ...).
  const refusal = (options ? customDatabaseRefusal(strategy, options) : null) ?? oidcOptionsRefusal(strategy, options, egressPolicyFrom(c.env));
  if (refusal) throw problem("invalid_body", { detail: `Payload validation error: ${refusal}` });
}

export const connectionRoutes = [
  defineRoute({
    method: "post",
    path: "/connections",
    scope: "create:connections",
    summary: "Create a connection (name unique: 409); credential options are encrypted at rest",
    body: createConnectionBody,
    status: 201,
    invalidatesConfig: true,
    async handler(c, { body }) {
      refuseCustomDatabase(c, body.strategy, body.options);
      const id = randomId("con_");
      const { options, secretsEnc } = await sealOptions(c, id, body.options ?? {});
      const fields = topLevelFields(body) as Record<string, Json>;
      const connection = unwrap(
        await targetTenant(c).connections(auditContext(c)).create({
          id,
          name: body.name,
          strategy: body.strategy,
          options: { ...options, ...fields },
          secrets_enc: secretsEnc,
        }),
      );
      return c.json(await present(c, connection), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/connections",
    scope: "read:connections",
    summary: "List connections, newest first, optionally of one strategy or name",
    query: LIST_QUERY.extend({ strategy: z.string().optional().describe("only connections of this strategy"), name: z.string().optional().describe("only the connection of this name") }),
    status: 200,
    async handler(c) {
      const filter = { strategy: c.req.query("strategy"), name: c.req.query("name") };
      const inherited = (await inheritedItems(c)).connections.filter(
        (x) => (!filter.strategy || x.strategy === filter.strategy) && (!filter.name || x.name === filter.name),
      );
      return listResponse(
        c,
        "connections",
        withInherited((window) => targetTenant(c).connections().list(window, filter), inherited),
        (connection) => connection.id,
        (connection) => present(c, connection),
      );
    },
  }),
  defineRoute({
    method: "get",
    path: "/connections/{id}",
    scope: "read:connections",
    summary: "Get one connection",
    status: 200,
    async handler(c, { params }) {
      const connection =
        (await targetTenant(c).connections().get(params.id)) ?? (await inheritedItems(c)).connections.find((x) => x.id === params.id);
      if (!connection) throw problem("inexistent_connection");
      return c.json(await present(c, connection));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/connections/{id}",
    scope: "update:connections",
    summary: "Update a connection; options, when given, replace the whole options object",
    body: updateConnectionBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      const id = params.id;
      refuseInherited((await inheritedItems(c)).connections, id);
      if (body.options) {
        const current = await targetTenant(c).connections().get(id);
        if (current) refuseCustomDatabase(c, current.strategy, body.options);
      }
      const sealed = body.options ? await sealOptions(c, id, body.options) : null;
      const patch = sealed ? { options: sealed.options, secrets_enc: sealed.secretsEnc, fields: topLevelFields(body) } : { fields: topLevelFields(body) };
      const connection = unwrap(await targetTenant(c).connections(auditContext(c)).update(id, patch));
      return c.json(await present(c, connection));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/connections/{id}",
    scope: "delete:connections",
    summary: "Delete a connection (one that still has users: 409)",
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params }) {
      refuseInherited((await inheritedItems(c)).connections, params.id);
      unwrap(await targetTenant(c).connections(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/clients/{id}/connections",
    scope: "read:connections",
    summary: "The application's connections in login-screen order (all tenant connections when none are set)",
    status: 200,
    async handler(c, { params }) {
      return c.json(presentClientConnections(unwrap(await targetTenant(c).connections().ofClient(params.id))));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/clients/{id}/connections",
    scope: "update:connections",
    summary: "Replace the application's ordered connection ids (unknown ids are dropped)",
    body: clientConnectionsBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      const list = unwrap(await targetTenant(c).connections(auditContext(c)).setForClient(params.id, body));
      return c.json(presentClientConnections(list));
    },
  }),
];
