import { DEFAULT_SMS_TEMPLATES } from "../../shared/schemas/settings/documents";
import { tenantObject } from "../tenant/stubs";
import type { AppContext } from "../context";
import { renderLiquid } from "./liquid";

/**
 * The text of an MFA SMS from the tenant's templates (GET|PUT /guardian/factors/sms/templates), rendered as
 * Liquid with the reference platform's variables `code` and `tenant.friendly_name` (and `tenant.name`).
 * `enrollment` while the phone is being enrolled, `verification` otherwise. A template that fails to render
 * falls back to the default text, so a bad template never blocks a login.
 */
export async function mfaSmsText(
  c: AppContext,
  kind: "enrollment" | "verification",
  code: string,
  friendlyName: string,
  templates?: Record<string, unknown>,
): Promise<string> {
  // `templates`: the document already read with the step's other reads (POST /mfa/challenge: issue 31).
  const stored = (templates ?? (await tenantObject(c.env, c.var.tenant.id).settingsDocuments().get("guardian_sms_templates"))) as Partial<typeof DEFAULT_SMS_TEMPLATES>;
  const key = `${kind}_message` as const;
  const vars = { code, tenant: { friendly_name: friendlyName, name: c.var.tenant.id } };
  try {
    return await renderLiquid(stored[key] ?? DEFAULT_SMS_TEMPLATES[key], vars, "plain");
  } catch {
    return renderLiquid(DEFAULT_SMS_TEMPLATES[key], vars, "plain");
  }
}
