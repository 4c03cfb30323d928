import { describe, expect, it } from "vitest";
import { managementRoutes } from "../../../src/worker/management";
import { matchSpecificity, realRouteWins, UNOFFERED_READS, UNOFFERED_ROUTES } from "../../../src/worker/management/unoffered";

/** The table of routes this service does not offer (issue 9 point 8) and its precedence rules. */
describe("unoffered management routes", () => {
  it("match OpenAPI-style paths and `/*` tails, counting literal segments", () => {
    expect(matchSpecificity("/rules", "/rules")).toBe(1);
    expect(matchSpecificity("/rules/*", "/rules/rul_1")).toBe(1);
    expect(matchSpecificity("/rules/*", "/rules/rul_1/deeper")).toBe(1);
    expect(matchSpecificity("/rules/*", "/rules")).toBe(-1);
    expect(matchSpecificity("/hooks/{id}/secrets", "/hooks/hk_1/secrets")).toBe(2);
    expect(matchSpecificity("/hooks/{id}", "/hooks/hk_1/secrets")).toBe(-1);
    expect(matchSpecificity("/tenants/{id}", "/tenants/settings")).toBe(1);
    expect(matchSpecificity("/tenants/settings", "/tenants/settings")).toBe(2);
  });

  it("a real route wins every tie, so implementing a route makes its row inert", () => {
    const real = [{ method: "get", path: "/rules/{id}" }] as never;
    expect(realRouteWins(real, "GET", "/rules/rul_1", "/rules/*")).toBe(true);
    expect(realRouteWins(real, "DELETE", "/rules/rul_1", "/rules/*")).toBe(false);
    const tenants = [{ method: "get", path: "/tenants/{id}" }] as never;
    expect(realRouteWins(tenants, "GET", "/tenants/settings", "/tenants/settings")).toBe(false);
  });

  it("no unoffered read answers a path a real GET route serves, and each sits under a 403 row for its writes", () => {
    for (const { path } of UNOFFERED_READS) {
      const concrete = path.replace(/\{[A-Za-z_]+\}/g, "x");
      for (const route of managementRoutes.filter((r) => r.method.toUpperCase() === "GET")) {
        expect(matchSpecificity(route.path.replace(/\{[a-z_]+\}/g, "{p}"), concrete), `${path} is served by GET ${route.path}`).toBe(-1);
      }
      expect(UNOFFERED_ROUTES.some((row) => row.paths.some((p) => matchSpecificity(p, concrete) >= 0)), `${path} has no 403 row`).toBe(true);
    }
  });

  it("no row covers a route this service serves (a later issue that implements one removes its row)", () => {
    for (const { paths } of UNOFFERED_ROUTES) {
      for (const pattern of paths) {
        for (const route of managementRoutes) {
          const concrete = route.path.replace(/\{[A-Za-z_]+\}/g, "x");
          expect(matchSpecificity(pattern, concrete), `${pattern} covers ${route.method} ${route.path}`).toBe(-1);
        }
      }
    }
  });
});
