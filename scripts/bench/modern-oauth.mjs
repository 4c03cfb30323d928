/**
 * Bench rows of issue 33 (DPoP, PAR): spread into SCENARIOS and RATIOS by scripts/bench/scenarios.mjs.
 *
 * - `token_dpop`: client_credentials tokens bound to a DPoP key (each request carries a fresh proof from a
 *   pool signed before the run), read against the plain `token` row.
 * - `code_flow` and `par_code_flow`: whole authorization-code flows through an SSO session, per flow (2 and
 *   3 requests each: /authorize then /oauth/token, or /oauth/par, /authorize with the request_uri, then
 *   /oauth/token), so the ratio says what pushing the request costs a flow.
 */
import { createPrivateKey, generateKeyPairSync, randomUUID, sign } from "node:crypto";

const form = (fields) => new URLSearchParams(fields).toString();
const b64url = (value) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** More proofs than the warm-up and the measured run can use at well above the expected rate. */
const PROOFS_TO_SIGN = 40_000;

/** DPoP proofs (RFC 9449 §4.2) for POST `htu`, ES256, each with its own jti and iat now (valid 60 s). */
function signProofs(htu, count) {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { kty, crv, x, y } = publicKey.export({ format: "jwk" });
  const header = b64url({ typ: "dpop+jwt", alg: "ES256", jwk: { kty, crv, x, y } });
  const key = createPrivateKey(privateKey.export({ format: "pem", type: "pkcs8" }));
  const iat = Math.floor(Date.now() / 1000);
  const proofs = [];
  for (let i = 0; i < count; i++) {
    const input = `${header}.${b64url({ htm: "POST", htu, iat, jti: randomUUID() })}`;
    const signature = sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" }).toString("base64url");
    proofs.push(`${input}.${signature}`);
  }
  return proofs;
}

/**
 * @param {{ loginApp: (ctx: object) => Promise<{ clientId: string, clientSecret: string, session: string }>, callback: string }} shared
 */
export function modernOAuthScenarios({ loginApp, callback }) {
  const codeQuery = (clientId) => ({ client_id: clientId, redirect_uri: callback, response_type: "code", scope: "openid profile" });
  // autocannon hands the raw header names as the server sent them.
  const codeFrom = (headers) => {
    const name = Object.keys(headers).find((key) => key.toLowerCase() === "location");
    return new URL(name ? String(headers[name]) : "", "http://x").searchParams.get("code") ?? "none";
  };
  const exchange = (app) => ({
    method: "POST",
    path: "/oauth/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    setupRequest: (req, context) => ({
      ...req,
      body: form({ grant_type: "authorization_code", code: context.code ?? "none", redirect_uri: callback, client_id: app.clientId, client_secret: app.clientSecret }),
    }),
  });
  return [
    {
      id: "token_dpop",
      label: "DPoP-bound client_credentials tokens (POST /oauth/token with a DPoP proof)",
      unit: "tokens/s",
      kind: "load",
      expectStatus: 200,
      setup(ctx) {
        const proofs = signProofs(`${ctx.baseUrl}/oauth/token`, PROOFS_TO_SIGN);
        return {
          requests: [
            {
              method: "POST",
              path: "/oauth/token",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: form({ grant_type: "client_credentials", client_id: ctx.clientId, client_secret: ctx.clientSecret, audience: "urn:gatehouse:management" }),
              // Each request spends its own proof (jti single use); a drained pool would show up as failures.
              setupRequest: (req) => ({ ...req, headers: { ...req.headers, dpop: proofs.pop() ?? "drained" } }),
            },
          ],
        };
      },
    },
    {
      id: "code_flow",
      label: "authorization-code flows by SSO: /authorize, /oauth/token (per flow)",
      unit: "flows/s",
      kind: "load",
      requestsPerUnit: 2,
      redirectsAnswer: true,
      async setup(ctx) {
        const app = await loginApp(ctx);
        return {
          requests: [
            {
              method: "GET",
              path: `/authorize?${new URLSearchParams(codeQuery(app.clientId))}`,
              headers: { cookie: app.session },
              onResponse: (_status, _body, context, headers) => {
                context.code = codeFrom(headers);
              },
            },
            exchange(app),
          ],
        };
      },
    },
    {
      id: "par_code_flow",
      label: "pushed authorization-code flows by SSO: /oauth/par, /authorize?request_uri, /oauth/token (per flow)",
      unit: "flows/s",
      kind: "load",
      requestsPerUnit: 3,
      redirectsAnswer: true,
      async setup(ctx) {
        const app = await loginApp(ctx);
        return {
          requests: [
            {
              method: "POST",
              path: "/oauth/par",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: form({ ...codeQuery(app.clientId), client_secret: app.clientSecret }),
              onResponse: (_status, body, context) => {
                try {
                  context.requestUri = JSON.parse(body).request_uri;
                } catch {
                  context.requestUri = undefined;
                }
              },
            },
            {
              method: "GET",
              headers: { cookie: app.session },
              setupRequest: (req, context) => ({ ...req, path: `/authorize?${new URLSearchParams({ client_id: app.clientId, request_uri: context.requestUri ?? "none" })}` }),
              onResponse: (_status, _body, context, headers) => {
                context.code = codeFrom(headers);
              },
            },
            exchange(app),
          ],
        };
      },
    },
  ];
}

export const MODERN_OAUTH_RATIOS = [
  { label: "DPoP-bound client_credentials tokens/s ÷ plain client_credentials tokens/s (issue 33; target ≥ 0.8)", numerator: "token_dpop", denominator: "token" },
  { label: "PAR + code flows/s ÷ plain code flows/s (issue 33; target ≥ 0.8)", numerator: "par_code_flow", denominator: "code_flow" },
];
