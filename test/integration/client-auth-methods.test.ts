import { calculateJwkThumbprint, exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { mgmt, uniqueId } from "../helpers/api";
import { tokenForm } from "../helpers/flows";
import { type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 2: `client_authentication_methods` on POST/PATCH /clients, the reference platform's way to turn
 * on private_key_jwt (Terraform's auth0_client_credentials, the SDKs): credentials inline on create, ids of the
 * client's credentials on update, null to go back to a secret. The token endpoint then verifies assertions with
 * exactly the credentials named; mutual TLS is refused with a clear 400.
 */

const SCOPES = ["create:clients", "read:clients", "update:clients", "create:client_credentials", "read:client_credentials", "create:client_grants"];
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
let kit: ReachKit;
const as = (extra: { body?: unknown } = {}) => ({ token: kit.allowed, headers: { "tenant-id": kit.tenant }, ...extra });
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

interface Key {
  pair: CryptoKeyPair;
  pem: string;
  kid: string;
}
let one: Key;
let two: Key;

async function newKey(): Promise<Key> {
  const pair = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  return { pair, pem: await exportSPKI(pair.publicKey), kid: await calculateJwkThumbprint(await exportJWK(pair.publicKey), "sha256") };
}

beforeAll(async () => {
  kit = await reachKit(SCOPES);
  [one, two] = await Promise.all([newKey(), newKey()]);
}, 30_000);

/** A client_credentials token request authenticated with an assertion signed by `key`. */
async function tokenWith(clientId: string, key: Key) {
  const host = `${kit.tenant}.localhost:8787`;
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: key.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(`http://${host}/oauth/token`)
    .setJti(crypto.randomUUID())
    .setExpirationTime(Math.floor(Date.now() / 1000) + 60)
    .sign(key.pair.privateKey);
  return tokenForm({ grant_type: "client_credentials", audience: "urn:gatehouse:management", client_assertion_type: ASSERTION_TYPE, client_assertion: assertion }, {}, host);
}

const credential = (key: Key, name: string) => ({ credential_type: "public_key", name, pem: key.pem, alg: "RS256" });

async function createWithKey(key: Key) {
  const res = await mgmt("POST", "/clients", as({ body: { name: uniqueId("pkj"), app_type: "non_interactive", grant_types: ["client_credentials"], client_authentication_methods: { private_key_jwt: { credentials: [credential(key, "first")] } } } }));
  expect(res.status, await res.clone().text()).toBe(201);
  const client = await json<{ client_id: string; client_secret: string; client_authentication_methods: { private_key_jwt: { credentials: { id: string }[] } } }>(res);
  const grant = await mgmt("POST", "/client-grants", as({ body: { client_id: client.client_id, audience: "urn:gatehouse:management", scope: ["read:clients"] } }));
  expect(grant.status).toBe(201);
  return client;
}

describe("client_authentication_methods", () => {
  it("POST /clients with private_key_jwt credentials: shown by id on create and read, no token_endpoint_auth_method; the key authenticates", async () => {
    const client = await createWithKey(one);
    const id = client.client_authentication_methods.private_key_jwt.credentials[0]?.id as string;
    expect(id).toMatch(/^cred_/);
    expect(client).toMatchObject({ token_endpoint_auth_method: null, client_authentication_methods: { private_key_jwt: { credentials: [{ id }] } } });
    const read = await json(await mgmt("GET", `/clients/${client.client_id}`, as()));
    expect(read).toMatchObject({ token_endpoint_auth_method: null, client_authentication_methods: { private_key_jwt: { credentials: [{ id }] } } });
    expect(await json(await mgmt("GET", `/clients/${client.client_id}/credentials`, as()))).toEqual([expect.objectContaining({ id, name: "first", kid: one.kid, credential_type: "public_key" })]);
    const token = await tokenWith(client.client_id, one);
    expect(token.status, await token.clone().text()).toBe(200);
  });

  it("only the credentials named verify; PATCH with other ids switches keys; an id not the client's is 400 and changes nothing", async () => {
    const client = await createWithKey(one);
    const added = await json<{ id: string }>(await mgmt("POST", `/clients/${client.client_id}/credentials`, as({ body: credential(two, "second") })));
    // The client holds the second key but does not name it: it does not authenticate.
    expect((await tokenWith(client.client_id, two)).status).toBe(401);
    const patched = await mgmt("PATCH", `/clients/${client.client_id}`, as({ body: { client_authentication_methods: { private_key_jwt: { credentials: [{ id: added.id }] } } } }));
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(await json(patched)).toMatchObject({ token_endpoint_auth_method: null, client_authentication_methods: { private_key_jwt: { credentials: [{ id: added.id }] } } });
    expect((await tokenWith(client.client_id, two)).status).toBe(200);
    expect((await tokenWith(client.client_id, one)).status).toBe(401);

    const foreign = await mgmt("PATCH", `/clients/${client.client_id}`, as({ body: { client_authentication_methods: { private_key_jwt: { credentials: [{ id: "cred_notthisclients" }] } } } }));
    expect(foreign.status).toBe(400);
    expect(await json(foreign)).toMatchObject({ statusCode: 400, errorCode: "invalid_body", message: expect.stringContaining("cred_notthisclients") });
    expect((await tokenWith(client.client_id, two)).status).toBe(200);
  });

  it("null goes back to a secret method (named beside it); the client's secret then authenticates and assertions do not", async () => {
    // The reference gives every confidential client a secret, shown once on create, private_key_jwt or not.
    const client = await createWithKey(one);
    expect(client.client_secret).toEqual(expect.any(String));
    const back = await mgmt("PATCH", `/clients/${client.client_id}`, as({ body: { token_endpoint_auth_method: "client_secret_post", client_authentication_methods: null } }));
    expect(back.status, await back.clone().text()).toBe(200);
    const after = await json<Record<string, unknown>>(back);
    expect(after.token_endpoint_auth_method).toBe("client_secret_post");
    expect(after).not.toHaveProperty("client_authentication_methods");
    const host = `${kit.tenant}.localhost:8787`;
    const bySecret = await tokenForm({ grant_type: "client_credentials", audience: "urn:gatehouse:management", client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(bySecret.status, await bySecret.clone().text()).toBe(200);
    expect((await tokenWith(client.client_id, one)).status).toBe(401);
  });

  it("refuses mutual TLS, both methods at once, null alone and a bad key, with a clear 400 and no client made", async () => {
    const name = uniqueId("refused");
    const base = { name, app_type: "non_interactive", grant_types: ["client_credentials"] };
    const cases: [unknown, RegExp][] = [
      [{ ...base, client_authentication_methods: { tls_client_auth: { credentials: [{ credential_type: "cert_subject_dn", subject_dn: "CN=a" }] } } }, /tls_client_auth is for mutual TLS/],
      [{ ...base, client_authentication_methods: { self_signed_tls_client_auth: { credentials: [] } } }, /self_signed_tls_client_auth is for mutual TLS/],
      [{ ...base, token_endpoint_auth_method: "client_secret_post", client_authentication_methods: { private_key_jwt: { credentials: [credential(one, "k")] } } }, /cannot both be set/],
      [{ ...base, client_authentication_methods: { private_key_jwt: { credentials: [{ credential_type: "public_key", pem: "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----" }] } } }, /pem must be a PEM public key/],
      [{ ...base, client_authentication_methods: { private_key_jwt: { credentials: [credential(one, "a"), credential(one, "b")] } } }, /already has a credential with this key/],
    ];
    for (const [body, message] of cases) {
      const res = await mgmt("POST", "/clients", as({ body }));
      expect([400, 409], await res.clone().text()).toContain(res.status);
      expect((await json<{ message: string }>(res)).message).toMatch(message);
    }
    const clients = await json<{ name: string }[]>(await mgmt("GET", "/clients?per_page=100", as()));
    expect(clients.filter((c) => c.name === name)).toEqual([]);
    const client = await createWithKey(one);
    const nullAlone = await mgmt("PATCH", `/clients/${client.client_id}`, as({ body: { token_endpoint_auth_method: null } }));
    expect(nullAlone.status).toBe(400);
    const mtls = await mgmt("PATCH", `/clients/${client.client_id}`, as({ body: { client_authentication_methods: { tls_client_auth: { credentials: [] } } } }));
    expect(mtls.status).toBe(400);
    expect((await tokenWith(client.client_id, one)).status).toBe(200);
  });
});
