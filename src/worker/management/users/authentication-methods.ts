import { z } from "zod";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import {
  type CreateAuthenticationMethodInput,
  createAuthenticationMethodBody,
  EMPTY_METHOD_FIELDS,
  replaceAuthenticationMethodsBody,
  updateAuthenticationMethodBody,
} from "../../../shared/schemas/authentication-methods";
import type { AuthenticationMethodRecord, AuthenticationMethodType, NewAuthenticationMethod } from "../../../shared/schemas/authentication-methods";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { listResponse } from "../list-response";
import { requireUser, targetTenant } from "../tenant-scoped";

/** An authentication method id in the reference platform's style: `<type>|dev_<random>`. */
export const newMethodId = (type: Exclude<AuthenticationMethodType, "recovery-code">) => `${type}|dev_${randomId("", 20)}`;

const isWebAuthn = (m: Pick<AuthenticationMethodRecord, "type">) => m.type === "passkey" || m.type === "webauthn-roaming" || m.type === "webauthn-platform";

/**
 * A method in the reference platform's shape (`UserAuthenticationMethod`) with the SPEC §2.4 field names
 * beside it (`credential_id` = `key_id`, `friendly_name` = `name`). Never the TOTP secret, in any form.
 */
export function presentMethod(m: AuthenticationMethodRecord) {
  const out: Record<string, unknown> = { id: m.id, type: m.type, confirmed: m.confirmed };
  if (m.name !== null) out.name = m.name;
  if (m.type === "phone") {
    out.phone_number = m.phone_number;
    out.preferred_authentication_method = m.preferred_authentication_method ?? "sms";
  }
  if (isWebAuthn(m)) {
    Object.assign(out, {
      key_id: m.credential_id,
      credential_id: m.credential_id,
      public_key: m.public_key,
      sign_count: m.sign_count ?? 0,
      credential_backed_up: m.credential_backed_up ?? false,
      transports: m.transports ?? [],
    });
    if (m.name !== null) out.friendly_name = m.name;
    for (const key of ["credential_device_type", "aaguid", "relying_party_identifier", "user_handle", "user_agent"] as const) {
      if (m[key] !== null) out[key] = m[key];
    }
  }
  out.created_at = m.created_at;
  if (m.enrolled_at !== null) out.enrolled_at = m.enrolled_at;
  if (m.last_auth_at !== null) out.last_auth_at = m.last_auth_at;
  return out;
}

/**
 * The stored form of a validated body: id generated, TOTP secret sealed under its own context (so a
 * ciphertext copied to another method does not open). Methods created here are confirmed unless the body
 * says otherwise (the reference platform: "should already have verification completed").
 */
export async function prepareMethod(c: AppContext, userId: string, body: CreateAuthenticationMethodInput): Promise<NewAuthenticationMethod> {
  const id = newMethodId(body.type);
  const base: NewAuthenticationMethod = {
    ...EMPTY_METHOD_FIELDS,
    id,
    user_id: userId,
    type: body.type,
    confirmed: body.confirmed ?? true,
    name: body.name ?? null,
  };
  if (body.type === "totp") {
    const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
    return { ...base, totp_secret_enc: await cipher.encrypt(body.totp_secret, encryptionContext.totpSecret(id)) };
  }
  if (body.type === "phone") {
    return { ...base, phone_number: body.phone_number, preferred_authentication_method: body.preferred_authentication_method ?? "sms" };
  }
  const backedUp = body.credential_backed_up ?? false;
  return {
    ...base,
    name: body.friendly_name ?? body.name ?? null,
    credential_id: (body.credential_id ?? body.key_id) as string,
    public_key: body.public_key,
    sign_count: body.sign_count ?? 0,
    credential_backed_up: backedUp,
    credential_device_type: body.credential_device_type ?? (backedUp ? "multi_device" : null),
    transports: body.transports ? [...new Set(body.transports)] : [],
    aaguid: body.aaguid?.toLowerCase() ?? null,
    relying_party_identifier: body.relying_party_identifier?.toLowerCase() ?? null,
    user_handle: body.user_handle ?? null,
    user_agent: body.user_agent ?? null,
  };
}

const METHODS_QUERY = z.looseObject({
  page: z.string().optional().describe("0-based page"),
  per_page: z.string().optional().describe("1-100, default 50"),
  include_totals: z.string().optional().describe("true|false: envelope {start, limit, length, total, authenticators}"),
});

const PATH = "/users/{id}/authentication-methods";

export const authenticationMethodRoutes = [
  defineRoute({
    method: "get",
    path: PATH,
    scope: "read:authentication_methods",
    summary: "A user's authentication methods, in enrollment order (offset pages; envelope field authenticators)",
    query: METHODS_QUERY,
    status: 200,
    async handler(c, { params }) {
      await requireUser(c, params.id);
      return listResponse(c, "authenticators", (window) => {
        if (!("offset" in window)) throw problem("checkpoint_unsupported");
        return targetTenant(c).authenticationMethods().page(params.id, window);
      }, (m) => m.id, presentMethod, { checkpoint: false });
    },
  }),
  defineRoute({
    method: "get",
    path: `${PATH}/{method_id}`,
    scope: "read:authentication_methods",
    summary: "One authentication method of a user",
    status: 200,
    async handler(c, { params }) {
      await requireUser(c, params.id);
      const method = await targetTenant(c).authenticationMethods().get(params.id, params.method_id);
      if (!method) throw problem("inexistent_authentication_method");
      return c.json(presentMethod(method));
    },
  }),
  defineRoute({
    method: "post",
    path: PATH,
    scope: "create:authentication_methods",
    summary: "Create a confirmed authentication method (totp, phone, webauthn-roaming, webauthn-platform, passkey); the TOTP secret is encrypted and never returned",
    body: createAuthenticationMethodBody,
    status: 201,
    async handler(c, { params, body }) {
      const method = await prepareMethod(c, params.id, body);
      const created = unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).create(method));
      return c.json(presentMethod(created), 201);
    },
  }),
  defineRoute({
    method: "delete",
    path: `${PATH}/{method_id}`,
    scope: "delete:authentication_methods",
    summary: "Remove one authentication method of a user",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).delete(params.id, params.method_id));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "delete",
    path: PATH,
    scope: "delete:authentication_methods",
    summary: "Remove every authentication method of a user",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).deleteAll(params.id));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "put",
    path: PATH,
    scope: "update:authentication_methods",
    summary: "Replace every authentication method of the user with these (recovery codes kept); all or nothing",
    body: replaceAuthenticationMethodsBody,
    status: 200,
    async handler(c, { params, body }) {
      await requireUser(c, params.id);
      const methods = await Promise.all(body.map((item) => prepareMethod(c, params.id, item)));
      const replaced = unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).replaceAll(params.id, methods));
      return c.json(replaced.map(presentMethod));
    },
  }),
  defineRoute({
    method: "patch",
    path: `${PATH}/{method_id}`,
    scope: "update:authentication_methods",
    summary: "Rename an authentication method, or choose sms or voice for a phone",
    body: updateAuthenticationMethodBody,
    status: 200,
    async handler(c, { params, body }) {
      const method = unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).update(params.id, params.method_id, body));
      return c.json(presentMethod(method));
    },
  }),
];
