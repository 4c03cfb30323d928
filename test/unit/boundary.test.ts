import { describe, expect, it } from "vitest";

/**
 * The worker and the objects meet only over RPC (issue 7 point 5): per-tenant deployments will put them in
 * different scripts. The worker may import the object classes' *types* (and re-export the classes from its
 * entry point, which the runtime needs); objects never import the worker. Both may import src/shared.
 */
const sources = import.meta.glob(["../../src/**/*.ts", "../../src/**/*.tsx"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

/** Runtime (non-type) import specifiers of a source file. */
function runtimeImports(text: string): string[] {
  const found: string[] = [];
  const pattern = /^\s*(import|export)\s+(type\s+)?([^"';]*?)\s*from\s+"([^"]+)"/gm;
  for (const match of text.matchAll(pattern)) {
    const typeOnly = Boolean(match[2]) || /^\{\s*(type\s+[^,}]+,?\s*)+\}$/.test(match[3] ?? "");
    if (!typeOnly) found.push(match[4] ?? "");
  }
  return found;
}

const files = (prefix: string) => Object.entries(sources).filter(([path]) => path.startsWith(prefix));

describe("the worker/object boundary (issue 7 point 5)", () => {
  it("finds the sources it checks", () => {
    expect(files("../../src/worker/").length).toBeGreaterThan(20);
    expect(files("../../src/objects/").length).toBeGreaterThan(10);
  });

  it("the worker imports no runtime value from src/objects (the entry point's class re-exports aside)", () => {
    const offenders = files("../../src/worker/")
      .filter(([path]) => path !== "../../src/worker/index.ts")
      .flatMap(([path, text]) => runtimeImports(text).filter((s) => s.includes("/objects/")).map((s) => `${path} -> ${s}`));
    expect(offenders).toEqual([]);
  });

  it("the worker entry point re-exports only the object classes from src/objects", () => {
    const entry = sources["../../src/worker/index.ts"] ?? "";
    const fromObjects = runtimeImports(entry).filter((s) => s.includes("/objects/"));
    expect(fromObjects.every((s) => /\/objects\/(tenant|user|platform|codes)\/[a-z]+-object$/.test(s))).toBe(true);
  });

  it("objects import nothing from src/worker, not even types", () => {
    const offenders = files("../../src/objects/").flatMap(([path, text]) =>
      [...text.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1] ?? "").filter((s) => s.includes("/worker/")).map((s) => `${path} -> ${s}`),
    );
    expect(offenders).toEqual([]);
  });
});
