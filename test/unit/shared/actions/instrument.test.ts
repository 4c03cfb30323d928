import { parse } from "acorn";
import { describe, expect, it } from "vitest";
import { GUARD, instrumentAction } from "../../../../src/shared/actions/instrument";

const compiled = (source: string) => {
  const out = instrumentAction(source);
  if (!out.ok) throw new Error(out.message);
  return out.code;
};
const guards = (code: string) => code.split(`${GUARD}(`).length - 1;

describe("action instrumentation (the step guard that stops endless code locally)", () => {
  it("guards every loop, function and catch, and the result still parses", () => {
    const code = compiled(`
      "use strict";
      exports.onExecutePostLogin = async (event, api) => { for (;;) {} };
      function f(x) { "use strict"; while (x) x--; do { x++; } while (x < 3); return x; }
      const g = (y) => y * 2;
      for (const k of [1]) for (const j in {}) ;
      try { f(1); } catch (e) { f(2); }
      class A { static { let i = 0; } m() { return 1; } get v() { return 2; } }
    `);
    // 5 functions (2 arrows, f, a method, a getter) + 5 loops (for(;;), while, do, for-of, for-in) + catch + static block.
    expect(guards(code)).toBe(12);
    expect(() => parse(code, { ecmaVersion: "latest", sourceType: "script" })).not.toThrow();
    // Directive prologues stay first, so strict mode is kept.
    expect(code).toMatch(/function f\(x\) \{ "use strict";__gh_step\(\);/);
    expect(code).toContain(`(y) => (${GUARD}(),y * 2)`);
  });

  it("keeps an arrow's object-literal body an expression", () => {
    const code = compiled("const h = () => ({ a: 1 });");
    expect(code).toBe(`const h = () => ((${GUARD}(),{ a: 1 }));`);
  });

  it("reports syntax errors with their position, and refuses code that could shadow the guard", () => {
    expect(instrumentAction("exports.x = (")).toMatchObject({ ok: false, line: 1 });
    expect(instrumentAction("var __gh_step = () => {};")).toMatchObject({ ok: false, message: expect.stringContaining("reserved") });
    expect(instrumentAction("with ({}) { x = 1; }")).toMatchObject({ ok: false, message: expect.stringContaining("with") });
  });
});

describe("no code generation from strings in the service (issue 13 point 2)", () => {
  const sources = import.meta.glob(["../../../../src/**/*.ts", "../../../../src/**/*.tsx"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
  it("no source of the worker or the objects calls eval or new Function", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(50);
    for (const [path, text] of Object.entries(sources)) {
      expect(/\bnew Function\s*\(|(^|[^.\w])eval\s*\(/.test(text), path).toBe(false);
    }
  });
});
