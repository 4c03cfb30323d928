import { describe, expect, it } from "vitest";
import { mgmt, uniqueId } from "../helpers/api";

type Body = { statusCode: number; errorCode: string; message: string };

async function failure(res: Response): Promise<Body> {
  const body = (await res.json()) as Body;
  return { statusCode: res.status, errorCode: body.errorCode, message: body.message };
}

/** Every route that can miss the same thing; each must answer the same status, code and message. */
const MISSES: Record<string, Array<[string, string, unknown?]>> = {
  client: [
    ["GET", "/clients/{id}"],
    ["PATCH", "/clients/{id}", { name: "x" }],
    ["DELETE", "/clients/{id}"],
    ["POST", "/clients/{id}/rotate-secret"],
    ["GET", "/clients/{id}/connections"],
  ],
  "email provider": [
    ["GET", "/emails/provider"],
    ["PATCH", "/emails/provider", { enabled: false }],
    ["DELETE", "/emails/provider"],
  ],
  job: [
    ["GET", "/jobs/{id}"],
    ["GET", "/jobs/{id}/errors"],
  ],
  connection: [
    ["GET", "/connections/{id}"],
    ["PATCH", "/connections/{id}", { options: {} }],
    ["DELETE", "/connections/{id}"],
  ],
  "custom domain": [
    ["GET", "/custom-domains/{id}"],
    ["PATCH", "/custom-domains/{id}", { tls_policy: "recommended" }],
    ["DELETE", "/custom-domains/{id}"],
    ["POST", "/custom-domains/{id}/verify"],
    ["POST", "/custom-domains/{id}/test"],
  ],
  "resource server": [
    ["GET", "/resource-servers/{id}"],
    ["PATCH", "/resource-servers/{id}", { name: "x" }],
    ["DELETE", "/resource-servers/{id}"],
  ],
  organization: [
    ["GET", "/organizations/{id}"],
    ["PATCH", "/organizations/{id}", { display_name: "x" }],
    ["DELETE", "/organizations/{id}"],
    ["GET", "/organizations/name/{id}"],
    ["GET", "/organizations/{id}/enabled_connections"],
    ["POST", "/organizations/{id}/enabled_connections", { connection_id: "con_x" }],
    ["GET", "/organizations/{id}/members"],
    ["POST", "/organizations/{id}/members", { members: ["auth0|x"] }],
    ["DELETE", "/organizations/{id}/members", { members: ["auth0|x"] }],
    ["GET", "/organizations/{id}/members/auth0%7Cx/roles"],
    ["GET", "/organizations/{id}/invitations"],
    ["GET", "/organizations/{id}/invitations/uinv_x"],
    ["DELETE", "/organizations/{id}/invitations/uinv_x"],
  ],
  action: [
    ["GET", "/actions/actions/{id}"],
    ["PATCH", "/actions/actions/{id}", { code: "" }],
    ["PATCH", "/actions/actions/{id}", { secrets: [{ name: "A" }] }],
    ["DELETE", "/actions/actions/{id}"],
    ["POST", "/actions/actions/{id}/deploy"],
    ["POST", "/actions/actions/{id}/test", { payload: {} }],
    ["GET", "/actions/actions/{id}/versions"],
    ["GET", "/actions/actions/{id}/versions/v1"],
    ["POST", "/actions/actions/{id}/versions/v1/deploy"],
  ],
  user: [
    ["GET", "/users/{id}"],
    ["PATCH", "/users/{id}", { name: "x" }],
    ["DELETE", "/users/{id}"],
    ["POST", "/users/{id}/identities", { provider: "auth0", user_id: "x" }],
    ["DELETE", "/users/{id}/identities/auth0/x"],
    ["GET", "/users/{id}/sessions"],
    ["GET", "/users/{id}/refresh-tokens"],
    ["GET", "/refresh-tokens?user_id={id}"],
    ["GET", "/users/{id}/organizations"],
    ["POST", "/jobs/verification-email", { user_id: "auth0|nobody-at-all" }],
  ],
  role: [
    ["GET", "/roles/{id}"],
    ["PATCH", "/roles/{id}", { name: "x" }],
    ["DELETE", "/roles/{id}"],
    ["GET", "/roles/{id}/permissions"],
    ["DELETE", "/roles/{id}/permissions", { permissions: [{ resource_server_identifier: "x", permission_name: "y" }] }],
    ["GET", "/roles/{id}/users"],
    ["POST", "/roles/{id}/users", { users: ["auth0|x"] }],
  ],
  "user (roles and permissions)": [
    ["GET", "/users/{id}/roles"],
    ["POST", "/users/{id}/roles", { roles: ["rol_x"] }],
    ["DELETE", "/users/{id}/roles", { roles: ["rol_x"] }],
    ["GET", "/users/{id}/permissions"],
    ["DELETE", "/users/{id}/permissions", { permissions: [{ resource_server_identifier: "x", permission_name: "y" }] }],
  ],
  "user (its authentication methods)": [
    ["GET", "/users/{id}/authentication-methods"],
    ["POST", "/users/{id}/authentication-methods", { type: "totp", totp_secret: "JBSWY3DPEHPK3PXP" }],
    ["DELETE", "/users/{id}/authentication-methods"],
    ["GET", "/users/{id}/authentication-methods/totp%7Cdev_x"],
    ["DELETE", "/users/{id}/authentication-methods/totp%7Cdev_x"],
  ],
  tenant: [
    ["GET", "/tenants/{id}"],
    ["PATCH", "/tenants/{id}", { friendly_name: "x" }],
    ["DELETE", "/tenants/{id}"],
    ["GET", "/tenants/{id}/operations"],
    ["POST", "/tenants/{id}/operations", { kind: "upgrade" }],
    ["POST", "/tenants/{id}/redeploy"],
    ["POST", "/tenants/{id}/management-token"],
  ],
  "tenant operation": [["GET", "/operations/{id}"]],
  "refresh token": [
    ["GET", "/refresh-tokens/{id}"],
    ["PATCH", "/refresh-tokens/{id}", { refresh_token_metadata: { a: "b" } }],
    ["DELETE", "/refresh-tokens/{id}"],
    ["GET", "/refresh_tokens/{id}"],
    ["PATCH", "/refresh_tokens/{id}", { refresh_token_metadata: null }],
  ],
  session: [
    ["GET", "/sessions/{id}"],
    ["PATCH", "/sessions/{id}", { session_metadata: { a: "b" } }],
    ["DELETE", "/sessions/{id}"],
    ["POST", "/sessions/{id}/revoke"],
  ],
  "proxy route": [
    ["GET", "/proxy-routes/{id}"],
    ["PATCH", "/proxy-routes/{id}", { priority: 1 }],
    ["DELETE", "/proxy-routes/{id}"],
  ],
};

describe("the same failure answers the same code on every route (issue 7 point 3)", () => {
  for (const [what, routes] of Object.entries(MISSES)) {
    it(`an unknown ${what} reads the same on ${routes.map(([m]) => m).join(", ")}`, async () => {
      const id = uniqueId("missing");
      const answers = [];
      for (const [method, path, body] of routes) {
        answers.push(await failure(await mgmt(method, path.replace("{id}", id), { body })));
      }
      expect(answers[0]?.statusCode).toBe(404);
      for (const answer of answers) expect(answer).toEqual(answers[0]);
    });
  }

  it("an unknown tenant named by the tenant-id header reads like an unknown tenant in /tenants/{id}", async () => {
    const id = uniqueId("missing");
    const byHeader = await failure(await mgmt("GET", "/clients", { headers: { "tenant-id": id } }));
    const byPath = await failure(await mgmt("GET", `/tenants/${id}`));
    expect(byHeader).toEqual(byPath);
    expect(byPath).toMatchObject({ statusCode: 404, errorCode: "tenant_not_found", message: "Tenant not found" });
  });
});
