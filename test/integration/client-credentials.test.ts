import { calculateJwkThumbprint, exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { mgmt } from "../helpers/api";
import { seedClient, tokenForm } from "../helpers/flows";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 2: /clients/{id}/credentials, the public keys a private_key_jwt client signs its assertions
 * with (Terraform's auth0_client_credentials). A credential verifies at /oauth/token until it expires or is
 * removed.
 */

const SCOPES = ["read:client_credentials", "create:client_credentials", "update:client_credentials", "delete:client_credentials", "create:client_grants"];
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
let kit: ReachKit;
let pem: string;
let keys: CryptoKeyPair;
const as = (extra: { body?: unknown } = {}) => ({ token: kit.allowed, headers: { "tenant-id": kit.tenant }, ...extra });
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

beforeAll(async () => {
  kit = await reachKit(SCOPES);
  keys = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  pem = await exportSPKI(keys.publicKey);
});

async function pkjClient() {
  const client = await seedClient(kit.tenant, { grant_types: ["client_credentials"], token_endpoint_auth_method: "private_key_jwt" });
  const grant = await mgmt("POST", "/client-grants", as({ body: { client_id: client.client_id, audience: "urn:gatehouse:management", scope: ["read:client_credentials"] } }));
  expect(grant.status).toBe(201);
  return client.client_id;
}

async function tokenWith(clientId: string, kid: string) {
  const host = `${kit.tenant}.localhost:8787`;
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(`http://${host}/oauth/token`)
    .setJti(crypto.randomUUID())
    .setExpirationTime(now + 60)
    .sign(keys.privateKey);
  return tokenForm({ grant_type: "client_credentials", audience: "urn:gatehouse:management", client_assertion_type: ASSERTION_TYPE, client_assertion: assertion }, {}, host);
}

describe("/clients/{id}/credentials", () => {
  it("adds a public key (kid = RFC 7638 thumbprint), lists and reads it in the reference shape, never the key", async () => {
    const clientId = await pkjClient();
    const res = await mgmt("POST", `/clients/${clientId}/credentials`, as({ body: { credential_type: "public_key", name: "ci key", pem, alg: "RS256" } }));
    expect(res.status, await res.clone().text()).toBe(201);
    const created = await json<Record<string, unknown>>(res);
    const kid = await calculateJwkThumbprint(await exportJWK(keys.publicKey), "sha256");
    expect(created).toEqual({ id: expect.stringMatching(/^cred_/), name: "ci key", kid, alg: "RS256", credential_type: "public_key", created_at: expect.any(String), updated_at: expect.any(String) });
    expect(JSON.stringify(created)).not.toContain("BEGIN");
    expect(await json(await mgmt("GET", `/clients/${clientId}/credentials`, as()))).toEqual([created]);
    expect(await json(await mgmt("GET", `/clients/${clientId}/credentials/${created.id}`, as()))).toEqual(created);
    const again = await mgmt("POST", `/clients/${clientId}/credentials`, as({ body: { credential_type: "public_key", pem } }));
    expect(again.status).toBe(409);
  });

  it("a credential authenticates private_key_jwt at /oauth/token until it expires or is removed", async () => {
    const clientId = await pkjClient();
    const kid = await calculateJwkThumbprint(await exportJWK(keys.publicKey), "sha256");
    expect((await tokenWith(clientId, kid)).status).toBe(401);
    const created = await json<{ id: string }>(await mgmt("POST", `/clients/${clientId}/credentials`, as({ body: { credential_type: "public_key", pem } })));
    expect((await tokenWith(clientId, kid)).status).toBe(200);

    const expired = await mgmt("PATCH", `/clients/${clientId}/credentials/${created.id}`, as({ body: { expires_at: new Date(Date.now() - 1000).toISOString() } }));
    expect(expired.status).toBe(200);
    expect(await json(expired)).toMatchObject({ id: created.id, expires_at: expect.any(String) });
    expect((await tokenWith(clientId, kid)).status).toBe(401);
    const renewed = await mgmt("PATCH", `/clients/${clientId}/credentials/${created.id}`, as({ body: { expires_at: null } }));
    expect(await json(renewed)).not.toHaveProperty("expires_at");
    expect((await tokenWith(clientId, kid)).status).toBe(200);

    expect((await mgmt("DELETE", `/clients/${clientId}/credentials/${created.id}`, as())).status).toBe(204);
    expect((await tokenWith(clientId, kid)).status).toBe(401);
    expect((await mgmt("GET", `/clients/${clientId}/credentials/${created.id}`, as())).status).toBe(404);
    expect((await mgmt("DELETE", `/clients/${clientId}/credentials/${created.id}`, as())).status).toBe(404);
  });

  it("refuses certificates (mutual TLS), bad or weak keys, bad fields and unknown clients, writing nothing", async () => {
    const clientId = await pkjClient();
    const small = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const weak = await exportSPKI(small.publicKey);
    const ec = await exportSPKI((await generateKeyPair("ES256", { extractable: true })).publicKey);
    const cases: [unknown, RegExp][] = [
      [{ credential_type: "x509_cert", pem }, /mutual TLS/],
      [{ credential_type: "cert_subject_dn", subject_dn: "CN=x" }, /mutual TLS/],
      [{ credential_type: "public_key" }, /pem is required/],
      [{ credential_type: "public_key", pem: "not a key" }, /BEGIN PUBLIC KEY/],
      [{ credential_type: "public_key", pem: weak }, /1024|2048/],
      [{ credential_type: "public_key", pem: ec }, /pem must be/],
      [{ credential_type: "public_key", pem, alg: "HS256" }, /./],
      [{ credential_type: "public_key", pem, expires_at: "tomorrow" }, /./],
      [{ credential_type: "public_key", pem, private_key: "x" }, /./],
    ];
    for (const [body, message] of cases) {
      const res = await mgmt("POST", `/clients/${clientId}/credentials`, as({ body }));
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect((await json<{ message: string }>(res)).message).toMatch(message);
    }
    expect(await json(await mgmt("GET", `/clients/${clientId}/credentials`, as()))).toEqual([]);
    expect((await mgmt("POST", "/clients/nobody/credentials", as({ body: { credential_type: "public_key", pem } }))).status).toBe(404);
    expect((await mgmt("GET", "/clients/nobody/credentials", as())).status).toBe(404);
    expect((await mgmt("PATCH", `/clients/${clientId}/credentials/cred_nothing`, as({ body: { expires_at: null } }))).status).toBe(404);
    expect((await mgmt("PATCH", `/clients/${clientId}/credentials/cred_nothing`, as({ body: { name: "x" } }))).status).toBe(400);
  });

  it("who can reach: every refusal on each of the five operations", async () => {
    const body = { credential_type: "public_key", pem: "x" };
    await expectRefusals(kit, "GET", "/clients/any/credentials", "read:client_credentials");
    await expectRefusals(kit, "POST", "/clients/any/credentials", "create:client_credentials", body);
    await expectRefusals(kit, "GET", "/clients/any/credentials/cred_x", "read:client_credentials");
    await expectRefusals(kit, "PATCH", "/clients/any/credentials/cred_x", "update:client_credentials", { expires_at: null });
    await expectRefusals(kit, "DELETE", "/clients/any/credentials/cred_x", "delete:client_credentials");
  });
});
