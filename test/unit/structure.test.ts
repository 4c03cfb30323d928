import { describe, expect, it } from "vitest";

/**
 * The size rules of STYLE.md "Layout" (issue 26): no folder in src/ holds more than 25 files and no source
 * file has more than 400 lines. When a folder grows past that, split it by capability (never `misc/`).
 * The import rules (no cycle, the worker/object boundary, capability neighbours) are dependency-cruiser's:
 * .dependency-cruiser.cjs, run by `npm run lint` and `npm test`.
 */
const sources = import.meta.glob(["../../src/**/*"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;

const MAX_FILES_PER_FOLDER = 25;
const MAX_LINES_PER_FILE = 400;

describe("the size of src/ (issue 26)", () => {
  it("finds the sources it checks", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(300);
  });

  it(`no folder holds more than ${MAX_FILES_PER_FOLDER} files`, () => {
    const counts = new Map<string, number>();
    for (const path of Object.keys(sources)) {
      const folder = path.slice(0, path.lastIndexOf("/"));
      counts.set(folder, (counts.get(folder) ?? 0) + 1);
    }
    const over = [...counts].filter(([, n]) => n > MAX_FILES_PER_FOLDER).map(([folder, n]) => `${folder}: ${n} files`);
    expect(over).toEqual([]);
  });

  it(`no source file has more than ${MAX_LINES_PER_FILE} lines`, () => {
    const over = Object.entries(sources)
      .map(([path, text]) => [path, text.split("\n").length - (text.endsWith("\n") ? 1 : 0)] as const)
      .filter(([, lines]) => lines > MAX_LINES_PER_FILE)
      .map(([path, lines]) => `${path}: ${lines} lines`);
    expect(over).toEqual([]);
  });
});
