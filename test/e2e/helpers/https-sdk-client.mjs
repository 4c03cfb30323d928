/**
 * A Node program as a developer writes it against `npm start -- --https`: the UNMODIFIED auth0
 * ManagementClient (only `domain`, no custom fetch) and openid-client (no allowInsecureRequests, no
 * customFetch). Run by test/e2e/https.e2e.test.ts in a child process, because NODE_EXTRA_CA_CERTS, the
 * variable the banner tells the developer to export, is read only when Node starts.
 *
 * Input (environment): GATEHOUSE_DOMAIN (`localhost:PORT`), GATEHOUSE_CLIENT_ID, GATEHOUSE_CLIENT_SECRET,
 * GATEHOUSE_TENANT_ID (created through the SDK). Output: one JSON line on stdout, or the error on stderr.
 */
import { ManagementClient } from "auth0";
import * as oidc from "openid-client";

const { GATEHOUSE_DOMAIN: domain, GATEHOUSE_CLIENT_ID: clientId, GATEHOUSE_CLIENT_SECRET: clientSecret, GATEHOUSE_TENANT_ID: tenantId } = process.env;
const audience = "urn:gatehouse:management";

const management = new ManagementClient({ domain, clientId, clientSecret, audience });
const created = await management.fetch("/tenants", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ id: tenantId }),
});
const settings = await management.tenants.settings.get();

const config = await oidc.discovery(new URL(`https://${domain}/`), clientId, clientSecret);
const grant = await oidc.clientCredentialsGrant(config, { audience });

console.log(
  JSON.stringify({
    createdStatus: created.status,
    createdId: (await created.json()).id,
    settingsKeys: Object.keys(settings.data ?? settings),
    issuer: config.serverMetadata().issuer,
    tokenType: grant.token_type,
    accessToken: grant.access_token,
  }),
);
