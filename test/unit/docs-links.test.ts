import { describe, expect, it } from "vitest";

/**
 * Links between the docs work (issue 27 point 4): every relative markdown link and `#anchor` in README.md,
 * CONTRIBUTING.md and docs/*.md names a file of the repository and, when it has one, a heading of that file
 * under GitHub's slug rules. External links (`https:`, `mailto:`) are not followed.
 *
 * The files come through Vite's glob (this suite runs in workerd, whose `node:fs` is not the checkout's).
 */
const markdown = import.meta.glob(["../../*.md", "../../docs/**/*.md"], { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;
/** Every other file a doc may link to: only the names are used (the modules are never loaded). */
const otherFiles = Object.keys(
  import.meta.glob(["../../{src,scripts,test,migrations}/**/*", "../../*.{json,toml,ts,cjs,mjs}", "../../.ci/*"]),
);

/** Repository path of a glob key (`../../docs/a.md` -> `docs/a.md`). */
const repoPath = (key: string) => key.replace(/^\.\.\/\.\.\//, "");
const docs = new Map(Object.entries(markdown).map(([key, text]) => [repoPath(key), text]));
const files = new Set([...docs.keys(), ...otherFiles.map(repoPath)]);

/** The text outside fenced code blocks (a `#` line in a ```sh block is no heading, a `](x)` there no link). */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/**
 * GitHub's heading anchor (github-slugger): the heading's text (inline code, emphasis and links reduced to their
 * text), lower-cased, every character that is not a letter, digit, mark, `_`, `-` or space dropped, spaces turned
 * into `-`; a repeated slug gets `-1`, `-2`, ...
 */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/\*\*|__|\*/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a markdown file offers: its headings' slugs, numbered as GitHub numbers repeats. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const match of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(match[1] ?? "");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Inline links `[text](target)` (images included), without their optional "title". */
function links(text: string): string[] {
  const body = prose(text).replace(/`[^`\n]*`/g, "");
  return [...body.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? "");
}

/** `docs/a.md` + `../README.md#x` -> `README.md`, `x`. */
function resolveLink(from: string, target: string): { path: string; anchor: string | null } {
  const hash = target.indexOf("#");
  const pathPart = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  if (!pathPart) return { path: from, anchor };
  const parts = from.split("/").slice(0, -1);
  for (const segment of decodeURIComponent(pathPart).split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") parts.pop();
    else parts.push(segment);
  }
  return { path: parts.join("/"), anchor };
}

const exists = (path: string) => files.has(path) || [...files].some((f) => f.startsWith(`${path.replace(/\/$/, "")}/`));

describe("links in README.md and docs/ (issue 27)", () => {
  it("finds the docs it checks", () => {
    expect(docs.has("README.md")).toBe(true);
    expect([...docs.keys()].filter((p) => p.startsWith("docs/")).length).toBeGreaterThan(10);
  });

  it("slugs headings as GitHub does", () => {
    expect(slug("Device flow, pushed authorization requests, `iss`")).toBe("device-flow-pushed-authorization-requests-iss");
    expect(slug("Timeouts, and why the code is instrumented")).toBe("timeouts-and-why-the-code-is-instrumented");
    expect(slug("1. Start Gatehouse and get a management token")).toBe("1-start-gatehouse-and-get-a-management-token");
    expect(slug("The management API (`/api/v2`)")).toBe("the-management-api-apiv2");
    expect([...anchors("# A\n## A\n```sh\n# not a heading\n```\n## A")]).toEqual(["a", "a-1", "a-2"]);
  });

  it("every relative link names an existing file and heading", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [from, text] of docs) {
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked += 1;
        const { path, anchor } = resolveLink(from, target);
        if (!exists(path)) {
          broken.push(`${from}: ${target} (no file ${path})`);
          continue;
        }
        if (anchor === null) continue;
        const targetText = docs.get(path);
        if (targetText === undefined) broken.push(`${from}: ${target} (an anchor into a file that is not markdown)`);
        else if (!anchors(targetText).has(anchor)) broken.push(`${from}: ${target} (no heading "#${anchor}" in ${path})`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
