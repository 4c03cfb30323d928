import { isBreachedPassword } from "../../shared/breached-passwords/check";
import type { BreachedPasswordSettings } from "../../shared/schemas/settings/documents";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantObject } from "../tenant/stubs";

export type BreachedStage = "pre-user-registration" | "pre-change-password" | "login";

/** What the user reads when a breached password is refused (the same on every page and API). */
export const BREACHED_PASSWORD_MESSAGE =
  "This password has appeared in a data breach on another website and cannot be used here. Choose a different password.";

/**
 * Breached-password detection (GET|PATCH /api/v2/attack-protection/breached-password-detection): when enabled
 * and the password is on the bundled list (src/shared/breached-passwords), the event is logged
 * (`signup_pwd_leak`, `reset_pwd_leak`, `pwd_leak`: what admins read to learn why a sign-up was refused) and
 * the answer is "block" when the stage's shields hold `block` (a sign-up's `pre-user-registration`, a
 * password change's `pre-change-password`, a login's top-level `shields`). `admin_notification` and
 * `user_notification` log the event only: Gatehouse sends no breach notification emails.
 */
export async function breachedPasswordVerdict(
  c: AppContext,
  stage: BreachedStage,
  password: string,
  who: { client_id: string | null; user_id: string | null; connection: string; email: string },
): Promise<"allow" | "block"> {
  // The bundled list first (a local hash lookup): the settings are read only for a listed password, so a login,
  // sign-up or change with any other password costs the tenant object no round trip (issue 31's meter pins it).
  if (!(await isBreachedPassword(password))) return "allow";
  const stub = tenantObject(c.env, c.var.tenant.id);
  const settings = (await stub.settingsDocuments().get("breached_password_detection")) as unknown as BreachedPasswordSettings;
  if (!settings.enabled) return "allow";
  const shields = stage === "login" ? settings.shields : (settings.stage[stage]?.shields ?? []);
  const blocked = shields.includes("block");
  await stub.settingsDocuments(auditContext(c)).recordBreachedPassword({ stage, blocked, ...who });
  return blocked ? "block" : "allow";
}
