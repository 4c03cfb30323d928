import { auditContext } from "../../http/audit";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomId, randomToken } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import {
  CLIENT_EXTRA_FIELDS,
  CLIENT_READ_ONLY_FIELDS,
  CLIENT_TOKENS_REVOKED_BEFORE,
  createClientBody,
  privateKeyJwtCredentialIds,
  updateClientBody,
} from "../../../shared/schemas/clients";
import { z } from "zod";
import type { ClientPatch, Json } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { AppContext } from "../../context";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { defineRoute } from "../define";
import { refuseEgress } from "../egress";
import { LIST_QUERY, listResponse } from "../list-response";
import { createWithMethods, updateWithMethods } from "./client-auth-methods";
import { ensureSigningKey } from "./keys";
import { refuseCredentialsOfStrongerClient } from "../operator-authority";
import { targetTenant } from "../tenant-scoped";

/** Browser and device apps cannot keep a secret (RFC 8252 §8.5, OAuth 2.0 for Browser-Based Apps §6). */
const PUBLIC_APP_TYPES = new Set(["spa", "native"]);

/** The reference platform returns client secrets only to tokens holding this scope. */
const READ_SECRETS_SCOPE = "read:client_keys";

/** A new client secret: 32 random bytes, base64url. */
const newSecret = () => randomToken(32);

/** Secrets are encrypted here, in the worker; the object only ever holds the ciphertext (SPEC §5.12). */
async function sealSecret(c: AppContext, clientId: string, secret: string): Promise<string> {
  return (await fieldCipher(c.env.ENCRYPTION_KEY)).encrypt(secret, encryptionContext.clientSecret(clientId));
}

type LogoutSettings = { backchannel_logout_urls?: string[] | undefined } | null | undefined;

/** The back-channel logout URIs a body sets, in either spelling (checked against the egress policy). */
function refuseLogoutUrls(c: AppContext, body: { oidc_logout?: LogoutSettings; oidc_backchannel_logout?: LogoutSettings }): void {
  refuseEgress(c, "oidc_logout.backchannel_logout_urls", body.oidc_logout?.backchannel_logout_urls ?? []);
  refuseEgress(c, "oidc_backchannel_logout.backchannel_logout_urls", body.oidc_backchannel_logout?.backchannel_logout_urls ?? []);
}

type ExtraField = (typeof CLIENT_EXTRA_FIELDS)[number];
const isReadOnly = (key: string) => (CLIENT_READ_ONLY_FIELDS as readonly string[]).includes(key);
const isExtra = (key: string): key is ExtraField => (CLIENT_EXTRA_FIELDS as readonly string[]).includes(key);

/** Splits a body into column fields and the settings kept in `extra` (null clears one on update). */
function splitExtra<T extends object>(body: T): { fields: Omit<T, ExtraField>; extra: Record<string, Json | null> } {
  const fields: Record<string, unknown> = {};
  const extra: Record<string, Json | null> = {};
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || isReadOnly(key)) continue;
    if (isExtra(key)) extra[key] = value as Json | null;
    else fields[key] = value;
  }
  return { fields: fields as Omit<T, ExtraField>, extra };
}

/**
 * A client in the reference platform's shape: `extra` settings shown top-level, the secret decrypted when
 * `withSecret` (never a system client's), and nothing internal (no ciphertext, no system flag, no stored connection order, no
 * client-wide refresh-token revocation time).
 */
async function present(c: AppContext, client: ClientRecord, withSecret: boolean) {
  const { client_secret_enc, extra, is_system: _system, description, jwks, ...fields } = client;
  const { enabled_connections: _order, [CLIENT_TOKENS_REVOKED_BEFORE]: _revoked, ...settings } = extra;
  // A system client's secret is the deployment's (CONTROL_PLANE_CLIENT_SECRET, the console's derived one): no
  // token reads it, whatever it holds (read:client_keys is every seeded operator role's, Viewer included).
  const secret =
    withSecret && client_secret_enc && !client.is_system
      ? await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(client_secret_enc, encryptionContext.clientSecret(client.client_id))
      : null;
  return {
    tenant: c.var.tenant.id,
    global: false,
    ...fields,
    // A client on client_authentication_methods has no token_endpoint_auth_method, as on the reference.
    ...(privateKeyJwtCredentialIds(client).length ? { token_endpoint_auth_method: null } : {}),
    ...(description === null ? {} : { description }),
    ...(jwks ? { jwks } : {}),
    ...settings,
    ...(secret === null ? {} : { client_secret: secret }),
  };
}

const canReadSecrets = (c: AppContext) => c.var.auth.scopes.has(READ_SECRETS_SCOPE);

async function loadClient(c: AppContext, id: string): Promise<ClientRecord> {
  const client = await targetTenant(c).clients().get(id);
  if (!client) throw problem("inexistent_client");
  return client;
}

/** The "All Applications" client as the reference platform lists it (`global: true`), read-only here. */
function globalClient(tenantId: string) {
  return {
    tenant: tenantId,
    global: true,
    is_first_party: true,
    name: "All Applications",
    client_id: `${tenantId}-all-applications`,
    callbacks: [],
    grant_types: [],
    custom_login_page_on: false,
    sso_disabled: false,
    oidc_conformant: true,
  };
}

export const clientRoutes = [
  defineRoute({
    method: "post",
    path: "/clients",
    scope: "create:clients",
    summary: "Create an application; a secret is generated unless token_endpoint_auth_method is none",
    body: createClientBody,
    status: 201,
    invalidatesConfig: true,
    async handler(c, { body }) {
      refuseLogoutUrls(c, body);
      const appType = body.app_type ?? "regular_web";
      const clientId = randomId("", 32);
      const methods = await createWithMethods(clientId, body.client_authentication_methods, body.token_endpoint_auth_method);
      const method = methods.method ?? body.token_endpoint_auth_method ?? (PUBLIC_APP_TYPES.has(appType) ? "none" : "client_secret_post");
      const { extra } = splitExtra(body);
      if (methods.setting) extra.client_authentication_methods = methods.setting;
      // A PS256 ID-token choice needs a PS256 key in the ring before any token is issued.
      if (body.jwt_configuration?.alg === "PS256") await ensureSigningKey(c, "PS256");
      const client = unwrap(
        await targetTenant(c).clientCredentials(auditContext(c)).createClient(methods.credentials, {
          client_id: clientId,
          name: body.name,
          description: body.description ?? null,
          app_type: appType,
          client_secret_enc: method === "none" ? null : await sealSecret(c, clientId, newSecret()),
          token_endpoint_auth_method: method,
          grant_types: body.grant_types ?? [],
          callbacks: body.callbacks ?? [],
          allowed_logout_urls: body.allowed_logout_urls ?? [],
          web_origins: body.web_origins ?? [],
          jwks: body.jwks ?? null,
          is_first_party: body.is_first_party ?? true,
          oidc_conformant: body.oidc_conformant ?? true,
          client_metadata: body.client_metadata ?? {},
          extra: extra as Record<string, Json>,
        }),
      );
      return c.json(await present(c, client, true), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/clients",
    scope: "read:clients",
    summary: "List applications, newest first (client_secret only with read:client_keys); is_global=true lists the read-only \"All Applications\" stand-in",
    query: LIST_QUERY.extend({ is_global: z.enum(["true", "false"]).optional().describe("true: the tenant's global client, a read-only stand-in (no custom login page)") }),
    status: 200,
    handler(c) {
      const withSecret = canReadSecrets(c);
      // The reference platform's "All Applications" client carries tenant-wide login settings (deploy-cli's
      // pages.ts aborts an export without it). Gatehouse's login page is its own, so the stand-in says so: no
      // custom login page, nothing that signs anyone in (no grant types, no callbacks, no secret).
      if (c.req.query("is_global") === "true") {
        const global = globalClient(c.var.tenant.id);
        if (c.req.query("include_totals") !== "true") return c.json([global]);
        return c.json({ clients: [global], start: 0, limit: Number(c.req.query("per_page") ?? 50) || 50, total: 1 });
      }
      return listResponse(
        c,
        "clients",
        (window) => targetTenant(c).clients().list(window),
        (client) => client.client_id,
        (client) => present(c, client, withSecret),
      );
    },
  }),
  defineRoute({
    method: "get",
    path: "/clients/{id}",
    scope: "read:clients",
    summary: "Get one application (client_secret only with read:client_keys)",
    status: 200,
    async handler(c, { params }) {
      return c.json(await present(c, await loadClient(c, params.id), canReadSecrets(c)));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/clients/{id}",
    scope: "update:clients",
    summary: "Update an application; client_metadata is merged (null removes a key)",
    body: updateClientBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      refuseLogoutUrls(c, body);
      const id = params.id;
      const credentialFields = ["client_secret", "jwks", "client_authentication_methods", "token_endpoint_auth_method"];
      if (credentialFields.some((field) => field in body)) await refuseCredentialsOfStrongerClient(c, id);
      const { client_authentication_methods: methods, token_endpoint_auth_method: tokenMethod, ...rest } = body;
      const switched = updateWithMethods(methods, tokenMethod);
      const { fields, extra } = splitExtra(rest);
      if (switched.setting !== undefined) extra.client_authentication_methods = switched.setting;
      const patch: ClientPatch = { ...fields, ...(switched.method ? { token_endpoint_auth_method: switched.method } : {}), extra };
      // Switching to a secret-based method needs a secret; the object uses this one only if there is none.
      const method = switched.method;
      if (method && method !== "none" && method !== "private_key_jwt") {
        patch.client_secret_enc_if_missing = await sealSecret(c, id, newSecret());
      }
      if (body.jwt_configuration?.alg === "PS256") await ensureSigningKey(c, "PS256");
      const client = unwrap(await targetTenant(c).clients(auditContext(c)).update(id, patch));
      // A secret generated by this call is shown once, like one from create or rotate-secret.
      const isNewSecret = patch.client_secret_enc_if_missing !== undefined && client.client_secret_enc === patch.client_secret_enc_if_missing;
      return c.json(await present(c, client, isNewSecret || canReadSecrets(c)));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/clients/{id}",
    scope: "delete:clients",
    summary: "Delete an application and its client grants (system applications cannot be deleted: 400)",
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).clients(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "post",
    path: "/clients/{id}/rotate-secret",
    scope: "update:client_keys",
    summary: "Replace the application's secret; the old one stops working at once",
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params }) {
      const id = params.id;
      await refuseCredentialsOfStrongerClient(c, id);
      const client = unwrap(await targetTenant(c).clients(auditContext(c)).rotateSecret(id, await sealSecret(c, id, newSecret())));
      return c.json(await present(c, client, true));
    },
  }),
];
