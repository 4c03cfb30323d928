import { describe, expect, it } from "vitest";
import { prefersHtml } from "../../../src/worker/http/accept";

describe("prefersHtml (issue 29 point 6: HTML error pages only for clients that ask for HTML)", () => {
  it("is true for browsers' navigation Accept headers", () => {
    expect(prefersHtml("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")).toBe(true);
    expect(prefersHtml("application/xhtml+xml")).toBe(true);
  });
  it("is false without an explicit HTML type, or when JSON ranks at least as high", () => {
    for (const accept of [undefined, "", "*/*", "application/json", "text/*", "application/json,text/html", "text/html;q=0.5, application/json", "text/html;q=0", "text/html;q=abc"]) {
      expect(prefersHtml(accept), String(accept)).toBe(false);
    }
  });
});
