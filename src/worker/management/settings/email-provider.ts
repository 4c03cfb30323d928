/**
 * The tenant's email provider (`/api/v2/emails/provider`, the reference platform's routes and shapes).
 * Control-plane inheritance (issue 15 point 2): a child without a provider of its own shows the control
 * plane's, marked `inherited: true` and without secrets, and sends through it; POST or PATCH on such a child
 * creates the child's own provider from the request alone (the inherited one is never written back or
 * copied), and DELETE of the inherited provider is 403.
 */
import { z } from "zod";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { problem, unwrap } from "../../../shared/errors";
import {
  type CreateEmailProviderInput,
  createEmailProviderBody,
  type EmailProviderRecord,
  updateEmailProviderBody,
} from "../../../shared/schemas/email-provider";
import type { Json } from "../../../shared/types";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { parentOf } from "../../tenant/inheritance";
import { tenantObject } from "../../tenant/stubs";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

const FIELDS_QUERY = z.looseObject({
  fields: z.string().optional().describe("comma-separated fields to include (or exclude with include_fields=false)"),
  include_fields: z.string().optional().describe("true|false"),
});

/** The provider a tenant sends through: its own, else (inheriting) its parent's; null when none. */
export async function effectiveEmailProvider(c: AppContext, tenantId: string): Promise<{ provider: EmailProviderRecord; tenantId: string; inherited: boolean } | null> {
  const own = await tenantObject(c.env, tenantId).emailProvider().get();
  if (own) return { provider: own, tenantId, inherited: false };
  const parent = await parentOf(c.var.settings, tenantId);
  const inherited = parent ? await tenantObject(c.env, parent).emailProvider().get() : null;
  return inherited && parent ? { provider: inherited, tenantId: parent, inherited: true } : null;
}

function present(c: AppContext, provider: EmailProviderRecord, inherited: boolean) {
  const full: Record<string, unknown> = {
    name: provider.name,
    enabled: provider.enabled,
    ...(provider.default_from_address ? { default_from_address: provider.default_from_address } : {}),
    credentials: provider.credentials,
    settings: provider.settings,
    ...(inherited ? { inherited: true } : {}),
  };
  const fields = c.req.query("fields");
  if (!fields) return full;
  const names = new Set(fields.split(",").map((f) => f.trim()));
  const include = c.req.query("include_fields") !== "false";
  return Object.fromEntries(Object.entries(full).filter(([k]) => names.has(k) === include));
}

/** The stored form of a create body: the API key sealed for this tenant, the public credential fields kept. */
async function sealed(c: AppContext, body: CreateEmailProviderInput) {
  const { api_key, ...publicCredentials } = body.credentials;
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  return {
    name: body.name,
    enabled: body.enabled ?? true,
    default_from_address: body.default_from_address ?? null,
    credentials: publicCredentials,
    settings: (body.settings ?? {}) as Record<string, Json>,
    api_key_enc: await cipher.encrypt(api_key, encryptionContext.emailProvider(c.var.tenant.id)),
  };
}

async function createOwn(c: AppContext, body: CreateEmailProviderInput) {
  return unwrap(await targetTenant(c).emailProvider(auditContext(c)).create(await sealed(c, body)));
}

export const emailProviderRoutes = [
  defineRoute({
    method: "get",
    path: "/emails/provider",
    scope: "read:email_provider",
    summary: "The email provider (the control plane's, marked inherited, when an inheriting tenant has none); never the API key",
    query: FIELDS_QUERY,
    status: 200,
    async handler(c) {
      const found = await effectiveEmailProvider(c, c.var.tenant.id);
      if (!found) throw problem("inexistent_email_provider");
      return c.json(present(c, found.provider, found.inherited));
    },
  }),
  defineRoute({
    method: "post",
    path: "/emails/provider",
    scope: "create:email_provider",
    summary: "Configure the email provider (sendgrid with credentials.api_key); 409 when one is configured",
    body: createEmailProviderBody,
    status: 201,
    async handler(c, { body }) {
      return c.json(present(c, await createOwn(c, body), false), 201);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/emails/provider",
    scope: "update:email_provider",
    summary: "Change the email provider; on a tenant that only inherits one, create its own (name and credentials needed)",
    body: updateEmailProviderBody,
    status: 200,
    async handler(c, { body }) {
      const own = await targetTenant(c).emailProvider().get();
      if (!own) {
        const found = await effectiveEmailProvider(c, c.var.tenant.id);
        if (!found) throw problem("inexistent_email_provider");
        // The inherited provider is read-only here: the tenant gets its own, from this request alone.
        const parsed = createEmailProviderBody.safeParse(body);
        if (!parsed.success) {
          throw problem("invalid_body", { detail: "the email provider is inherited from the control plane; PATCH creates this tenant's own, which needs name and credentials" });
        }
        return c.json(present(c, await createOwn(c, parsed.data), false));
      }
      const { credentials, ...rest } = body;
      const { settings, ...others } = rest;
      let patch: Partial<Omit<EmailProviderRecord, "created_at" | "updated_at">> = { ...others, ...(settings ? { settings: settings as Record<string, Json> } : {}) };
      if (credentials) {
        const next = await sealed(c, { name: body.name ?? own.name, credentials });
        patch = { ...patch, credentials: next.credentials, api_key_enc: next.api_key_enc };
      }
      const updated = unwrap(await targetTenant(c).emailProvider(auditContext(c)).update(patch));
      return c.json(present(c, updated, false));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/emails/provider",
    scope: "delete:email_provider",
    summary: "Remove the email provider (an inherited one is read-only: 403)",
    status: 204,
    async handler(c) {
      const own = await targetTenant(c).emailProvider().get();
      if (!own && (await effectiveEmailProvider(c, c.var.tenant.id))?.inherited) throw problem("inherited_read_only");
      unwrap(await targetTenant(c).emailProvider(auditContext(c)).delete());
      return c.body(null, 204);
    },
  }),
];
