import { describe, expect, it } from "vitest";
import { HostCache } from "../../../src/worker/routing/host-cache";

describe("host cache", () => {
  it("keeps positive answers for the TTL and negative answers for the shorter negative TTL", () => {
    const cache = new HostCache<string>(30_000, 5_000);
    cache.set("a.example", "tenant-a", 0);
    cache.set("b.example", null, 0);
    expect(cache.get("a.example", 29_999)).toBe("tenant-a");
    expect(cache.get("b.example", 4_999)).toBeNull();
    expect(cache.get("b.example", 5_000)).toBeUndefined();
    expect(cache.get("a.example", 30_000)).toBeUndefined();
  });

  it("evicts the oldest entry beyond its capacity", () => {
    const cache = new HostCache<string>(1_000, 1_000, 2);
    cache.set("a", "1", 0);
    cache.set("b", "2", 0);
    cache.set("c", "3", 0);
    expect(cache.get("a", 1)).toBeUndefined();
    expect(cache.get("c", 1)).toBe("3");
  });
});
