import { problem, unwrap } from "../../../shared/errors";
import type { AuthenticationMethodRecord } from "../../../shared/schemas/authentication-methods";
import { auditContext } from "../../http/audit";
import { newRecoveryCodes, recoveryCodeHash } from "../../login/mfa/recovery-codes";
import { defineRoute } from "../define";
import { requireUser, targetTenant } from "../tenant-scoped";
import { presentEnrollment } from "./guardian";

/** The reference platform's enrollment `type` / `auth_method` of each kind of method. */
const ENROLLMENT_KIND: Record<string, { type: string; auth_method: string }> = {
  totp: { type: "authenticator", auth_method: "authenticator" },
  phone: { type: "sms", auth_method: "sms" },
  "webauthn-roaming": { type: "webauthn-roaming", auth_method: "webauthn-roaming" },
  "webauthn-platform": { type: "webauthn-platform", auth_method: "webauthn-platform" },
  passkey: { type: "passkey", auth_method: "passkey" },
};

/** The multifactor providers of DELETE /users/{id}/multifactor/{provider}, and the method type each names. */
const PROVIDERS: Record<string, string | null> = { "google-authenticator": "totp", duo: null };

const enrollment = (m: AuthenticationMethodRecord) => ({ ...presentEnrollment(m), ...(ENROLLMENT_KIND[m.type] ?? { type: m.type, auth_method: m.type }) });

/**
 * The users-side MFA routes of the reference platform (issue 28 point 2), over the same authentication
 * methods the login pages enroll and /users/{id}/authentication-methods manages.
 */
export const userMfaRoutes = [
  defineRoute({
    method: "get",
    path: "/users/{id}/enrollments",
    scope: "read:users",
    summary: "The user's MFA enrollments (authenticator, sms, WebAuthn), as guardian enrollments",
    status: 200,
    async handler(c, { params }) {
      await requireUser(c, params.id);
      const methods = await targetTenant(c).authenticationMethods().list(params.id);
      return c.json(methods.filter((m) => m.type !== "recovery-code").map(enrollment));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/multifactor/{provider}",
    scope: "update:users",
    summary: "Remove the user's enrollment with a provider: google-authenticator (TOTP) or duo (never offered here: nothing to remove)",
    status: 204,
    async handler(c, { params }) {
      if (!(params.provider in PROVIDERS)) throw problem("multifactor_provider_unknown", { provider: params.provider });
      await requireUser(c, params.id);
      const type = PROVIDERS[params.provider];
      const methods = (await targetTenant(c).authenticationMethods().list(params.id)).filter((m) => m.type === type);
      const writer = targetTenant(c).authenticationMethods(auditContext(c));
      for (const method of methods) {
        const result = await writer.delete(params.id, method.id);
        // A concurrent removal of the same method is the outcome asked for.
        if (!result.ok && result.error.code !== "inexistent_authentication_method") unwrap(result);
      }
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "post",
    path: "/users/{id}/recovery-code-regeneration",
    scope: "update:users",
    summary: "Replace the user's recovery codes with one new code, shown once: {recovery_code}",
    status: 200,
    async handler(c, { params }) {
      await requireUser(c, params.id);
      const [code = ""] = newRecoveryCodes();
      await targetTenant(c).mfa().replaceRecoveryCodes(params.id, [await recoveryCodeHash(code)]);
      return c.json({ recovery_code: code });
    },
  }),
  defineRoute({
    method: "post",
    path: "/users/{id}/multifactor/actions/invalidate-remember-browser",
    scope: "update:users",
    summary: "Forget every browser remembered for MFA: Gatehouse never skips MFA for a remembered browser, so none is (204)",
    status: 204,
    async handler(c, { params }) {
      await requireUser(c, params.id);
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/authenticators",
    scope: "delete:guardian_enrollments",
    summary: "Remove every MFA authenticator of the user (its authentication methods and recovery codes)",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).deleteAll(params.id));
      return c.body(null, 204);
    },
  }),
];
