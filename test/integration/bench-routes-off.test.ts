import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";

/**
 * The benchmark routes (`npm run bench`, src/worker/bench.ts) exist only when BENCH_ROUTES=1. Some write
 * (the rotation floor upserts into user objects, the seeds create users), so a deployment without the
 * flag must answer every one of them 404, whoever asks.
 */
describe("benchmark routes in a deployment without BENCH_ROUTES", () => {
  it("answer 404 and write nothing, GET or POST", async () => {
    const form = { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "refresh_token=x&client_id=y" };
    const cases: Array<[string, RequestInit]> = [
      ["/__bench/hello", {}],
      ["/__bench/sign?alg=ES256&n=1", {}],
      ["/__bench/token-floor", form],
      ["/__bench/rotation-floor", form],
      ["/__bench/rotation-floor-endpoint", form],
      ["/__bench/refresh-seed?client_id=x&users=1", { method: "POST" }],
      ["/__bench/users-seed?tenant=control_plane&count=1", { method: "POST" }],
      ["/__bench/commit?n=1", {}],
    ];
    for (const [path, init] of cases) {
      const res = await call(path, init);
      expect(res.status, path).toBe(404);
    }
  });
});
