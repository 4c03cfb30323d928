import { z } from "zod";
import { tokenRequestSchemas } from "../../shared/schemas/oauth";

let document: string | undefined;

/** GET /.well-known/openapi.json: the Auth API, built once per isolate from the request schemas. */
export function authApiSpec(): string {
  document ??= JSON.stringify({
    openapi: "3.1.0",
    info: { title: "Gatehouse Auth API", version: "1" },
    paths: {
      "/oauth/token": {
        post: {
          summary: "Token endpoint (RFC 6749 §3.2)",
          requestBody: {
            content: Object.fromEntries(
              ["application/x-www-form-urlencoded", "application/json"].map((type) => [
                type,
                { schema: { oneOf: Object.values(tokenRequestSchemas).map((s) => z.toJSONSchema(s, { io: "input" })) } },
              ]),
            ),
          },
          responses: { "200": { description: "Tokens" }, "400": { description: "OAuth error" }, "401": { description: "invalid_client" } },
        },
      },
      "/.well-known/jwks.json": { get: { summary: "The tenant's public signing keys", responses: { "200": { description: "JWK set" } } } },
      "/.well-known/openid-configuration": { get: { summary: "OpenID Provider metadata", responses: { "200": { description: "Discovery document" } } } },
    },
  });
  return document;
}
