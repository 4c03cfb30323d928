import { Hono } from "hono";
import { generateKeyPair, SignJWT } from "jose";
import type { AppEnv } from "./context";

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
  return router;
}
