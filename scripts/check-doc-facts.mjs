/**
 * Fact preservation check for the README split (issue 27 point 4): every backticked token, every number with a
 * unit, every fenced code block and every table row of an earlier README must still appear, whitespace aside,
 * in README.md or docs/*.md (table rows by their first cell and tokens, code blocks line by line: links were
 * added). Usage: `node scripts/check-doc-facts.mjs [git revision, default 78a2152]`.
 * Prints the counts and whatever is missing; exits 1 when something is.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const rev = process.argv[2] ?? "78a2152";
const root = join(import.meta.dirname, "..");
const old = execFileSync("git", ["show", `${rev}:README.md`], { cwd: root, encoding: "utf8" });
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => join("docs", f))];
const squash = (s) => s.replace(/\s+/g, " ").trim();
const corpus = squash(files.map((f) => readFileSync(join(root, f), "utf8")).join("\n"));

/** Paths renamed by the structure refactor (issue 26): the old README named them before it. */
const RENAMED = {
  "src/objects/tenant/rpc.ts": "src/objects/tenant/core/rpc.ts",
  "src/objects/tenant/publisher.ts": "src/objects/tenant/core/publisher.ts",
  "src/objects/tenant/metrics.ts": "src/objects/tenant/core/metrics.ts",
  "src/objects/tenant/job-lane.ts": "src/objects/tenant/jobs/job-lane.ts",
  "src/objects/tenant/cascade.ts": "src/objects/tenant/login/cascade.ts",
  "src/shared/errors.ts": "src/shared/errors/",
  "src/objects/tenant/outbox.ts": "src/objects/tenant/core/outbox.ts",
};
const has = (fact) => corpus.includes(squash(fact)) || (RENAMED[fact] !== undefined && corpus.includes(RENAMED[fact]));

// Fenced blocks first (their content is not prose), then the prose without them.
const blocks = [...old.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]);
const prose = old.replace(/^```[^\n]*\n[\s\S]*?^```/gm, "");
const ticks = [...new Set([...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]))];
const UNIT = String.raw`(?:ms|µs|s|KB|MB|GB|%|×|x|req\/s|events\/s|rows\/s|logins\/s|checks\/s|verifications\/s|\/s|minutes?|min|hours?|h|days?|characters?|bytes?|seconds?|writes|rows|users|events|files|tokens|attempts|codes|digits|steps?|core)`;
const numbers = [...new Set([...prose.matchAll(new RegExp(String.raw`\d[\d,.]*(?:-\d[\d,.]*)?\s?${UNIT}(?![A-Za-z])`, "g"))].map((m) => m[0]))];
const rows = old.split("\n").filter((l) => /^\|.*\|$/.test(l) && !/^\|[-:| ]+\|$/.test(l));
/** Table rows: the same first cell starts a row now, and that row holds every backticked token of the old one. */
const newRows = files.flatMap((f) => readFileSync(join(root, f), "utf8").split("\n")).filter((l) => /^\|.*\|$/.test(l));
const firstCell = (row) => row.split("|")[1].trim();
/** Rows of the file map whose path cell the structure refactor renamed. */
const RENAMED_ROWS = {
  "`src/objects/tenant/outbox.ts`, `publisher.ts`, `relay.ts`, `destinations.ts`, `audit.ts`, `events.ts`":
    "`src/objects/tenant/core/outbox.ts`, `publisher.ts`, `relay.ts`, `audit.ts`, `events.ts`; `outbox/destinations.ts`",
  "`src/shared/errors.ts`": "`src/shared/errors/`",
};
const rowKept = (row) =>
  newRows.some(
    (r) => (firstCell(r) === firstCell(row) || firstCell(r) === RENAMED_ROWS[firstCell(row)]) && [...row.matchAll(/`([^`]+)`/g)].every((m) => r.includes(m[1]) || (RENAMED[m[1]] !== undefined && r.includes(RENAMED[m[1]].split("/").pop() || RENAMED[m[1]]))),
  );
/** Code blocks: every line's command (a trailing `# comment` aside) is still in a block somewhere. */
const lineKept = (line) => has(line.replace(/\s+#\s.*$/, ""));
// Every word of four letters or more: a coarse net for reworded or dropped sentences.
const words = [...new Set(prose.toLowerCase().match(/[a-z][a-z-]{3,}/g))].filter((w) => !corpus.toLowerCase().includes(w));

const report = (name, list, kept = has) => {
  const missing = list.filter((f) => !kept(f));
  console.log(`${name}: ${list.length - missing.length}/${list.length} present`);
  for (const m of missing) console.log(`  missing: ${m.length > 160 ? `${m.slice(0, 160)}…` : m}`);
  return missing.length;
};
let missing = 0;
missing += report("backticked tokens", ticks);
missing += report("numbers with a unit", numbers);
missing += report("code blocks (line by line, comments aside)", blocks, (b) => b.split("\n").filter(Boolean).every(lineKept));
missing += report("table rows (first cell and every backticked token)", rows, rowKept);
// Paragraphs and list items kept word for word (the rest were reworded: links, headings, renamed paths).
const paragraphs = prose
  .split(/\n(?=- |\d+\. |\*\*|#)|\n\s*\n/)
  .map((p) => p.trim())
  .filter((p) => p && !p.startsWith("#") && !p.startsWith("|"));
const reworded = paragraphs.filter((p) => !has(p));
console.log(`paragraphs and list items kept word for word: ${paragraphs.length - reworded.length}/${paragraphs.length}`);
for (const p of reworded) console.log(`  reworded: ${squash(p).slice(0, 110)}…`);
console.log(`distinct words (4+ letters) of the old README absent now: ${words.length}${words.length ? ` (${words.join(", ")})` : ""}`);
process.exit(missing ? 1 : 0);
