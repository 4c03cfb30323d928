import { problem } from "../../../shared/errors";
import { MANAGEMENT_AUDIENCE } from "../../../shared/scopes";
import { copyIssuer, keptSecrets } from "../../deploy/provisioner";
import { namespaceFrom } from "../../deploy/namespace";
import { auditContext } from "../../http/audit";
import { platform } from "../../tenant/stubs";
import { defineRoute } from "../define";

/**
 * Managing a per-tenant copy from the control plane (issue 16). Each copy is its own deployment with its own
 * management API, whose M2M client secret the provisioner generated and the control plane keeps sealed (platform
 * migration 0006). An operator does not get that secret: this route uses it inside the control plane to run a
 * client_credentials grant against the copy (through the dispatch namespace, as the dispatcher reaches it) and
 * answers only the resulting access token, which expires, is scoped to the copy and can be revoked there.
 *
 * Control plane only, `read:tenant_credentials`; every issuance is audited (`tenant_management_token.created`).
 */
export const copyCredentialRoutes = [
  defineRoute({
    method: "post",
    path: "/tenants/{id}/management-token",
    scope: "read:tenant_credentials",
    summary:
      "A management API access token for a wfp tenant's own copy (control plane only): issued by the copy to its control-plane client; the client secret is never returned",
    status: 200,
    async handler(c, { params }) {
      if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      const registry = platform(c.env);
      const tenant = await registry.tenants().get(params.id);
      if (!tenant) throw problem("tenant_not_found");
      if (tenant.deployment_type !== "wfp") {
        throw problem("tenant_not_wfp", { tenant_id: tenant.id, detail: "the control plane's own management API serves it (tenant-id header)" });
      }
      if (tenant.provisioning_state !== "ready") throw problem("copy_not_ready", { tenant_id: tenant.id, state: tenant.provisioning_state });
      const secret = (await keptSecrets(c.env, tenant.id)).CONTROL_PLANE_CLIENT_SECRET;
      if (!secret) throw problem("copy_credentials_unavailable", { tenant_id: tenant.id });
      const namespace = namespaceFrom(c.env);
      if (!namespace) throw problem("not_implemented", { detail: "no dispatch namespace is configured on this worker" });
      const issuer = copyIssuer(c.env, tenant.id);
      const res = await namespace.fetchScript(
        tenant.worker_script_name,
        new Request(new URL("/oauth/token", issuer), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            grant_type: "client_credentials",
            client_id: c.var.settings.controlPlaneClientId,
            client_secret: secret,
            audience: MANAGEMENT_AUDIENCE,
          }),
        }),
      );
      if (!res?.ok) throw problem("copy_unreachable", { tenant_id: tenant.id, detail: res ? `status ${res.status}` : "no script" });
      const token = (await res.json()) as { access_token: string; token_type?: string; expires_in?: number; scope?: string };
      await registry
        .deploySecrets(auditContext(c), c.var.auth.tenantId)
        .recordTokenIssued(tenant.id, { audience: MANAGEMENT_AUDIENCE, scope: token.scope ?? null, expires_in: token.expires_in ?? null });
      return c.json({
        access_token: token.access_token,
        token_type: token.token_type ?? "Bearer",
        expires_in: token.expires_in ?? null,
        scope: token.scope ?? null,
        audience: MANAGEMENT_AUDIENCE,
        issuer,
        api_base_url: `${issuer}api/v2`,
      });
    },
  }),
];
