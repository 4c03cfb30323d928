import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomId, randomToken } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import {
  createResourceServerBody,
  DEFAULT_TOKEN_LIFETIME_S,
  updateResourceServerBody,
} from "../../../shared/schemas/resource-servers";
import type { ResourceServerRecord } from "../../../shared/schemas/resource-servers";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { ensureSigningKey } from "./keys";
import { inheritedItems, refuseInherited, withInherited } from "../inherited";
import { LIST_QUERY, listResponse } from "../list-response";
import { targetTenant } from "../tenant-scoped";
import { tenantDefaultSigningAlg } from "../settings/tenant-settings";

/**
 * The reference platform's shape (no timestamps): the HS256 `signing_secret` decrypted when the API has one
 * (the reference platform returns it with the API), never its ciphertext.
 */
async function present(c: AppContext, api: ResourceServerRecord) {
  const { created_at: _created, updated_at: _updated, signing_secret_enc, proof_of_possession, ...rest } = api;
  // The reference platform shows `proof_of_possession` only on an API that has the setting.
  const shown = proof_of_possession ? { ...rest, proof_of_possession } : rest;
  if (!signing_secret_enc) return shown;
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  return { ...shown, signing_secret: await cipher.decrypt(signing_secret_enc, encryptionContext.resourceServerSigningSecret(api.id)) };
}

/** Encrypts an API's signing secret, bound to the API's id (SPEC §5.12: secrets are encrypted at rest). */
async function sealSigningSecret(c: AppContext, id: string, secret: string): Promise<string> {
  return (await fieldCipher(c.env.ENCRYPTION_KEY)).encrypt(secret, encryptionContext.resourceServerSigningSecret(id));
}

/** A new signing secret: 32 random bytes, base64url (43 characters). */
const newSigningSecret = () => randomToken(32);

/** HS256 signs with the API's secret; every other algorithm needs a key of its kind in the ring first. */
async function prepareAlgorithm(c: AppContext, alg: string): Promise<void> {
  if (alg !== "HS256") await ensureSigningKey(c, alg);
}

export const resourceServerRoutes = [
  defineRoute({
    method: "post",
    path: "/resource-servers",
    scope: "create:resource_servers",
    summary: "Create an API; its identifier is the audience of the access tokens it receives (unique: 409)",
    body: createResourceServerBody,
    status: 201,
    invalidatesConfig: true,
    async handler(c, { body }) {
      // Without signing_alg the tenant's default applies (GET/PATCH /tenants/settings, default_signing_alg).
      const alg = body.signing_alg ?? (await tenantDefaultSigningAlg(c));
      // The key comes first, so that no token request ever finds the API without a key of its algorithm.
      await prepareAlgorithm(c, alg);
      const id = randomId("rs_");
      const secret = body.signing_secret ?? (alg === "HS256" ? newSigningSecret() : undefined);
      const api = unwrap(
        await targetTenant(c).resourceServers(auditContext(c)).create({
          id,
          identifier: body.identifier,
          name: body.name ?? body.identifier,
          scopes: body.scopes ?? [],
          signing_alg: alg,
          token_lifetime: body.token_lifetime ?? DEFAULT_TOKEN_LIFETIME_S,
          allow_offline_access: body.allow_offline_access ?? false,
          enforce_policies: body.enforce_policies ?? false,
          token_dialect: body.token_dialect ?? "access_token",
          signing_secret_enc: secret ? await sealSigningSecret(c, id, secret) : null,
          proof_of_possession: body.proof_of_possession ? { mechanism: "dpop", required: body.proof_of_possession.required } : null,
        }),
      );
      return c.json(await present(c, api), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/resource-servers",
    scope: "read:resource_servers",
    summary: "List APIs, newest first",
    query: LIST_QUERY,
    status: 200,
    async handler(c) {
      const inherited = (await inheritedItems(c)).resourceServers;
      return listResponse(
        c,
        "resource_servers",
        withInherited((window) => targetTenant(c).resourceServers().list(window), inherited),
        (api) => api.id,
        (api) => present(c, api),
      );
    },
  }),
  defineRoute({
    method: "get",
    path: "/resource-servers/{id}",
    scope: "read:resource_servers",
    summary: "Get one API",
    status: 200,
    async handler(c, { params }) {
      const api =
        (await targetTenant(c).resourceServers().get(params.id)) ?? (await inheritedItems(c)).resourceServers.find((x) => x.id === params.id);
      if (!api) throw problem("inexistent_resource_server");
      return c.json(await present(c, api));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/resource-servers/{id}",
    scope: "update:resource_servers",
    summary: "Update an API (the system management API cannot be modified: 400); removed scopes leave its grants",
    body: updateResourceServerBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      refuseInherited((await inheritedItems(c)).resourceServers, params.id);
      const { signing_secret, proof_of_possession, ...rest } = body;
      const patch =
        proof_of_possession === undefined
          ? rest
          : { ...rest, proof_of_possession: proof_of_possession ? { mechanism: "dpop" as const, required: proof_of_possession.required } : null };
      if (patch.signing_alg) await prepareAlgorithm(c, patch.signing_alg);
      // Switching to HS256 without a secret given: the object keeps a generated one only if the API has none.
      const sealed = signing_secret
        ? { signing_secret_enc: await sealSigningSecret(c, params.id, signing_secret) }
        : patch.signing_alg === "HS256"
          ? { signing_secret_enc_if_missing: await sealSigningSecret(c, params.id, newSigningSecret()) }
          : {};
      const api = unwrap(await targetTenant(c).resourceServers(auditContext(c)).update(params.id, { ...patch, ...sealed }));
      return c.json(await present(c, api));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/resource-servers/{id}",
    scope: "delete:resource_servers",
    summary: "Delete an API and its client grants (the system management API cannot be deleted: 400)",
    status: 204,
    invalidatesConfig: true,
    async handler(c, { params }) {
      refuseInherited((await inheritedItems(c)).resourceServers, params.id);
      unwrap(await targetTenant(c).resourceServers(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
];
