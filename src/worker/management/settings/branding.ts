import { updateBrandingBody } from "../../../shared/schemas/branding";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

export const brandingRoutes = [
  defineRoute({
    method: "get",
    path: "/branding",
    scope: "read:branding",
    summary: "The tenant's universal-login branding (logo_url, favicon_url, colors, font)",
    status: 200,
    async handler(c) {
      return c.json(await targetTenant(c).branding().get());
    },
  }),
  defineRoute({
    method: "patch",
    path: "/branding",
    scope: "update:branding",
    summary: "Update branding: http(s) URLs and #rgb/#rrggbb colours; null removes a value",
    body: updateBrandingBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      const branding = await targetTenant(c).branding(auditContext(c)).update(body);
      return c.json(branding);
    },
  }),
];
