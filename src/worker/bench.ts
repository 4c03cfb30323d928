import { newEventId } from "../shared/event-id";
import { Hono } from "hono";
import { generateKeyPair, SignJWT } from "jose";
import type { AppEnv } from "./context";
import { formatRefreshToken, newRefreshSecret, newRefreshTokenId, refreshSecretHash } from "./oauth/tokens/refresh-token";
import { readOAuthParams } from "./http/body";
import { signJwt } from "../shared/crypto/jwt";
import { tenantFromRequest } from "./middleware/request-context";
import { tenantObject, userObject } from "./tenant/stubs";
import type { AppContext } from "./context";
import { authRateLimit } from "./middleware/auth-rate-limit";
import { tokenCors } from "./middleware/cors";
import { noStore } from "./middleware/no-store";
import { NO_STORE, tokenRequest } from "./oauth/token";

/** The tenant whose seeded users the guarded rotation floor reads (`?standing=1`). */
const STANDING_FLOOR_TENANT = "bench-floor-standing";

/**
 * Bench-only routes (mounted when BENCH_ROUTES=1): raw in-worker JWT signing rate, and a hello route as the
 * bundle's own ceiling. Used by `npm run bench`, never by the product.
 */
export function benchRoutes(): Hono<AppEnv> {
  const keys = new Map<string, Promise<CryptoKey>>();
  const keyFor = (alg: string) => {
    let key = keys.get(alg);
    if (!key) {
      key = generateKeyPair(alg, { modulusLength: 2048 }).then((pair) => pair.privateKey);
      keys.set(alg, key);
    }
    return key;
  };
  // workerd advances Date.now() only across I/O; yielding to a timer makes the reading current.
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
  const router = new Hono<AppEnv>();
  router.get("/hello", (c) => c.text("ok"));
  // The floor of a token response: read a form body, sign one ES256 JWT, answer JSON (no tenant, no client).
  // `?replay=1`: plus the one durable write a DPoP proof's replay check costs (issue 33): one RPC to a tenant
  // object that records the proof's jti in its own transaction, as /oauth/token does for every DPoP request.
  router.post("/token-floor", async (c) => {
    const params = await readOAuthParams(c.req.raw);
    if (c.req.query("replay") === "1") {
      const fresh = await c.env.TENANT.getByName("bench-dpop-replay-floor").consumeDpopJti("bench-floor", crypto.randomUUID(), Date.now() + 65_000);
      if (!fresh) return c.json({ error: "replayed" }, 500);
    }
    const key = await keyFor("ES256");
    const now = Math.floor(Date.now() / 1000);
    const token = await signJwt({ iss: "bench", sub: `${params.client_id}@clients`, aud: params.audience, iat: now, exp: now + 86400, jti: crypto.randomUUID() }, key, "bench", "ES256", "at+jwt");
    return c.json({ access_token: token, token_type: "Bearer", expires_in: 86400 }, 200, { "Cache-Control": "no-store", Pragma: "no-cache" });
  });
  // The floor of a refresh rotation (issue 10): read a form body, hash the presented secret and its
  // successor, one RPC to a user object (of 1,000) that upserts one row, one RS256 signature, JSON.
  // `?write=0`: the same without the RPC and its write, so the two rows' difference is the durable write.
  // `?reuse=1` (issue 31): the least a rotation that keeps reuse detection must do in the user object, in one
  // transaction: read the presented token's row, insert its successor, mark the predecessor rotated. The
  // worker presents each floor user's last successor, as a client would.
  // `?standing=1` (issue 31): plus, in parallel with the user-object call, the one tenant read a refresh grant keeps
  // (`tokenSubject`: a user blocked or deleted since the token was issued is refused at once), of a user of
  // 1,000 seeded in a tenant of its own (`/__bench/users-seed?tenant=bench-floor-standing`).
  let rotations = 0;
  const heads = new Map<string, string>();
  const rotationFloor = async (c: AppContext, params: Record<string, string | undefined>, options: { reuse: boolean; standing: boolean; write: boolean }) => {
    const user = `floor-${rotations++ % 1000}`;
    const [presented, successor] = await Promise.all([refreshSecretHash(params.refresh_token ?? ""), refreshSecretHash(newRefreshSecret())]);
    const { reuse, standing } = options;
    const next = reuse ? newRefreshTokenId() : "";
    const holder = userObject(c.env, reuse ? "bench-floor-reuse" : "bench-floor", user);
    const [stored, subject] = await Promise.all([
      !options.write ||
        (reuse ? holder.benchRotateChainFloor(heads.get(user) ?? "none", next, successor) : holder.benchRotateFloor(presented.slice(0, 16), successor)),
      standing ? tenantObject(c.env, STANDING_FLOOR_TENANT).tokenSubject(`email|bench${(rotations - 1) % 1000}`, false, false) : null,
    ]);
    if (reuse) heads.set(user, next);
    if (!stored || (standing && !subject?.user)) return c.json({ error: "not stored" }, 500);
    const key = await keyFor("RS256");
    const now = Math.floor(Date.now() / 1000);
    const token = await signJwt({ iss: "bench", sub: user, aud: "urn:bench:floor", iat: now, exp: now + 86400, scope: "read:bench" }, key, "bench", "RS256", "at+jwt");
    return c.json({ access_token: token, refresh_token: successor, token_type: "Bearer", expires_in: 86400 }, 200, NO_STORE);
  };
  router.post("/rotation-floor", async (c) =>
    rotationFloor(c, await readOAuthParams(c.req.raw), {
      reuse: c.req.query("reuse") === "1",
      standing: c.req.query("standing") === "1",
      write: c.req.query("write") !== "0",
    }),
  );
  // The floor with its kept guarantees, through the token endpoint's own front (issue 31): the auth surface's
  // middleware (tenant from the host, the per-tenant limit, CORS) and `tokenRequest` (the form read and checked,
  // the client found and authenticated, DPoP), then the guarded floor's work. What a refresh costs beyond this
  // row is the refresh grant's own handling; what this row costs beyond the guarded floor, every grant pays.
  router.post("/rotation-floor-endpoint", noStore, tenantFromRequest, authRateLimit, tokenCors, async (c) => {
    const { ctx } = await tokenRequest(c);
    return rotationFloor(c, ctx.params, { reuse: true, standing: true, write: true });
  });
  // The floor of a login page that reads its login session from the tenant object (issue 29 point 1): the
  // tenant resolved from the request, one `logins().get(state)` RPC, a fixed HTML document of `bytes` bytes.
  const pages = new Map<number, string>();
  router.get("/page-floor", tenantFromRequest, async (c) => {
    const bytes = Math.min(Math.max(Number(c.req.query("bytes") ?? 6000) || 6000, 16), 200_000);
    let page = pages.get(bytes);
    if (!page) {
      page = `<!doctype html><html lang="en"><title>floor</title>${"x".repeat(bytes)}`.slice(0, bytes);
      pages.set(bytes, page);
    }
    const session = await tenantObject(c.env, c.var.tenant.id).logins().get(c.req.query("state") ?? "");
    if (!session) return c.text("no login session", 500);
    return c.html(page);
  });
  // The floor of a JWKS answer (issue 31): `bytes` bytes of JSON with the JWKS route's caching header, no
  // tenant resolved, nothing read: what a body of the JWKS's size costs the runtime over the hello route.
  const documents = new Map<number, string>();
  router.get("/jwks-floor", (c) => {
    const bytes = Math.min(Math.max(Number(c.req.query("bytes") ?? 1000) || 1000, 16), 200_000);
    let body = documents.get(bytes);
    if (!body) {
      body = JSON.stringify({ keys: [{ x: "x".repeat(Math.max(bytes - 19, 0)) }] }).slice(0, bytes);
      documents.set(bytes, body);
    }
    return c.body(body, 200, { "content-type": "application/json", "cache-control": "public, max-age=15, stale-while-revalidate=15, stale-if-error=86400" });
  });
  router.get("/sign", async (c) => {
    const asked = c.req.query("alg") ?? "RS256";
    const alg = ["RS256", "ES256", "EdDSA"].includes(asked) ? asked : "RS256";
    const n = Math.min(Math.max(Number(c.req.query("n") ?? 200) || 200, 1), 5000);
    const key = await keyFor(alg);
    await tick();
    const start = Date.now();
    for (let i = 0; i < n; i++) {
      await new SignJWT({ sub: "bench", i }).setProtectedHeader({ alg }).setIssuedAt().sign(key);
    }
    await tick();
    const ms = Date.now() - start;
    return c.json({ alg, n, ms, per_second: ms > 0 ? Math.round((n * 1000) / ms) : null });
  });
  // Outbox relay and commit probes run inside a throwaway tenant object (never registered as a tenant).
  router.get("/relay", async (c) => {
    const backlog = Math.min(Math.max(Number(c.req.query("backlog") ?? 1000) || 1000, 1), 200_000);
    return c.json(await c.env.TENANT.getByName(`bench-relay-${crypto.randomUUID()}`).bench().relay(backlog));
  });
  router.get("/commit", async (c) => {
    const n = Math.min(Math.max(Number(c.req.query("n") ?? 2000) || 2000, 1), 50_000);
    return c.json(await c.env.TENANT.getByName(`bench-commit-${crypto.randomUUID()}`).bench().commit(n));
  });
  // A/B of management writes: one tenant's object writes audit events straight to the logs table instead.
  router.get("/outbox", async (c) => {
    await c.env.TENANT.getByName(c.req.query("tenant") ?? "").bench().setOutbox(c.req.query("enabled") !== "false");
    return c.json({ ok: true });
  });
  // Users for the users rows (issue 9): passwordless users inserted in bulk inside the named tenant's object.
  router.post("/users-seed", async (c) => {
    const count = Math.min(Math.max(Number(c.req.query("count") ?? 1000) || 1000, 1), 50_000);
    const from = Math.max(Number(c.req.query("from") ?? 0) || 0, 0);
    const connection = c.req.query("connection") ?? "email";
    // `password_hash` (issue 31's login load): a bcrypt hash every seeded user shares.
    const password_hash = c.req.query("password_hash") ?? null;
    return c.json(await c.env.TENANT.getByName(c.req.query("tenant") ?? "").bench().seedUsers({ connection, from, count, password_hash }));
  });
  // Refresh-token families for `npm run bench` without bcrypt: passwordless users on the tenant and one or
  // more families each, minted exactly as a code exchange would (only the login is skipped).
  router.post("/refresh-seed", tenantFromRequest, async (c) => {
    const clientId = c.req.query("client_id") ?? "";
    const users = Math.min(Math.max(Number(c.req.query("users") ?? 1) || 1, 1), 2000);
    const families = Math.min(Math.max(Number(c.req.query("families") ?? 1) || 1, 1), 64);
    const offset = Number(c.req.query("offset") ?? 0) || 0;
    // Families for an API (`audience`, `scope` without openid: no ID token) or, by default, OIDC ones.
    const scope = c.req.query("scope") ?? "openid offline_access";
    const audience = c.req.query("audience") ?? null;
    const tenant = tenantObject(c.env, c.var.tenant.id);
    const tokens: string[] = [];
    for (let i = offset; i < offset + users; i++) {
      const userId = `auth0|bench${i}x${clientId.slice(0, 6)}`;
      await tenant.users().create({
        user_id: userId,
        connection: "Username-Password-Authentication",
        email: `bench-refresh-${i}-${clientId.slice(0, 6)}@example.com`,
        email_verified: true,
        password_hash: null,
      });
      for (let f = 0; f < families; f++) {
        const id = newRefreshTokenId();
        const secret = newRefreshSecret();
        await userObject(c.env, c.var.tenant.id, userId).refreshTokens().issue({
          id,
          token_hash: await refreshSecretHash(secret),
          client_id: clientId,
          user_id: userId,
          session_id: null,
          scope,
          audience,
          login: { connection: "Username-Password-Authentication", strategy: "auth0", auth_time: Math.floor(Date.now() / 1000) },
          device: {},
          lifetime_ms: null,
          idle_lifetime_ms: null,
        });
        tokens.push(formatRefreshToken({ tenantId: c.var.tenant.id, userId, id, secret }));
      }
    }
    return c.json({ tokens });
  });
  // Object meter (issue 31, OBJECT_METER=1): a window's round trips, transactions and outbox events on one
  // tenant's object and its users' objects; `replay` times the window's object-side work inside the object.
  router.post("/meter/start", async (c) => {
    const tenant = c.req.query("tenant") ?? "";
    await tenantObject(c.env, tenant).bench().meterStart(tenant);
    return c.json({ ok: true });
  });
  router.post("/meter/pause", async (c) => {
    const tenant = c.req.query("tenant") ?? "";
    await tenantObject(c.env, tenant).bench().meterPause(tenant, c.req.query("paused") === "1");
    return c.json({ ok: true });
  });
  router.post("/meter/stop", async (c) => {
    const tenant = c.req.query("tenant") ?? "";
    return c.json(await tenantObject(c.env, tenant).bench().meterStop(tenant));
  });
  // One RPC round trip's cost, the object's share included (an upper bound of it): `n` sequential cheap
  // reads (the configuration version) from this request into one tenant's object.
  // `kind=tx`: each call also commits one minimal transaction (a DPoP jti recorded: one DELETE of expired
  // rows, one INSERT), the floor of any request that writes to the tenant. `kind=facade`: an empty call on a
  // facade (`stub.bench().ping()`, pipelined on the call that opens it), what a facade round trip costs.
  router.get("/rpc-loop", async (c) => {
    const n = Math.min(Math.max(Number(c.req.query("n") ?? 2000) || 2000, 1), 100_000);
    const stub = tenantObject(c.env, c.req.query("tenant") ?? "");
    const kind = c.req.query("kind");
    // kind=append (issue 31): one code shard's batch of `batch` seacft events per call, as its alarm delivers them.
    const batch = Math.min(Math.max(Number(c.req.query("batch") ?? 100) || 100, 1), 500);
    const actor = { type: "client" as const, id: "bench", client_id: "bench" };
    const entries = () => Array.from({ length: batch }, () => ({ id: newEventId(Date.now()), at: Date.now(), client_id: "bench", user_id: "auth0|bench", audit: { actor } }));
    const run =
      kind === "tx"
        ? (i: number) => stub.consumeDpopJti("bench-floor", `${i}-${crypto.randomUUID()}`, Date.now() + 1000)
        : kind === "append"
          ? () => stub.appendCodeExchanges(entries())
          : kind === "facade"
            ? () => stub.bench().ping()
            : () => stub.getConfigVersion();
    await run(-1);
    await tick();
    const started = Date.now();
    for (let i = 0; i < n; i++) await run(i);
    await tick();
    const ms = Date.now() - started;
    return c.json({ n, ms, us: (ms * 1000) / n, ...(kind === "append" ? { batch } : {}) });
  });
  router.post("/meter/replay", async (c) => {
    const n = Math.min(Math.max(Number(c.req.query("n") ?? 200) || 200, 1), 100_000);
    const tenant = c.req.query("tenant") ?? "";
    return c.json(await tenantObject(c.env, tenant).bench().meterReplay(tenant, n));
  });
  return router;
}
