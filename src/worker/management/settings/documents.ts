import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { SETTINGS_DOCUMENTS, type SettingsDocument } from "../../../shared/schemas/settings/documents";
import { isPlain, withoutPaths } from "../../../shared/schemas/settings/merge";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

type Doc = Record<string, unknown>;

/** Seals each secret field the body carries (a null clears it), in place on a copy. */
async function sealSecrets(c: AppContext, doc: SettingsDocument, body: Doc): Promise<Doc> {
  const out = structuredClone(body);
  const secrets = doc.secrets ?? [];
  if (secrets.length === 0) return out;
  const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
  for (const path of secrets) {
    const parts = path.split(".");
    let node: unknown = out;
    for (const part of parts.slice(0, -1)) node = isPlain(node) ? node[part] : undefined;
    const leaf = parts[parts.length - 1] as string;
    if (!isPlain(node) || typeof node[leaf] !== "string") continue;
    node[leaf] = await cipher.encrypt(node[leaf] as string, encryptionContext.settingsSecret(doc.key, path));
  }
  return out;
}

const present = (doc: SettingsDocument, value: Doc) => withoutPaths(value, doc.secrets ?? []);

/**
 * GET and PUT/PATCH for every settings document (issue 28 point 1): the guardian factors' templates and
 * provider settings, breached-password detection, bot detection, CAPTCHA, phone-provider protection, risk
 * assessment and supplemental signals, in the reference platform's shapes. What each setting does here (or
 * that it is stored and shown only) is in its summary.
 */
export const settingsDocumentRoutes = SETTINGS_DOCUMENTS.flatMap((doc) =>
  doc.paths.flatMap((path) => [
    defineRoute({
      method: "get",
      path,
      scope: doc.read,
      summary: doc.summary,
      status: 200,
      async handler(c) {
        return c.json(present(doc, await targetTenant(c).settingsDocuments().get(doc.key)));
      },
    }),
    ...doc.verbs.map((method) =>
      defineRoute({
        method,
        path,
        scope: doc.write,
        summary: doc.summary,
        body: doc.body,
        status: 200,
        invalidatesConfig: true,
        async handler(c, { body }) {
          const sealed = await sealSecrets(c, doc, body);
          return c.json(present(doc, await targetTenant(c).settingsDocuments(auditContext(c)).update(doc.key, sealed)));
        },
      }),
    ),
  ]),
);
