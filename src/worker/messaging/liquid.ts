/**
 * The sandboxed Liquid engine of the email templates (issue 29 point 4), `liquidjs`: no file system (the
 * `include`, `render` and `layout` tags are refused when a template is written, and the engine's file system
 * finds nothing), no JavaScript property walk beyond own properties, and every render bounded: a count of
 * rendered nodes and a memory budget (workerd does not advance the clock during synchronous work, so a
 * time limit would not stop a loop), then a cap on the output's length. A template over a bound is
 * refused with a 400 when it is written (a trial render) and falls back to the built-in email when sent.
 */
import { Context, Liquid, type Template } from "liquidjs";

/** The longest output a template may render (body, subject or from). @default 262,144 characters */
export const MAX_RENDERED_CHARS = 262_144;
/** Nodes (tags, text and outputs) one render may evaluate: a loop is cut here. @default 10,000 */
export const MAX_RENDERED_NODES = 10_000;
/** liquidjs's memory budget per render (strings, arrays, ranges). @default 2,000,000 */
const MEMORY_LIMIT = 2_000_000;
/** Characters of template source one parse may take. @default 200,000 */
const PARSE_LIMIT = 200_000;

/** A template that cannot be used: its message says why, for a 400 or a log line. */
export class TemplateError extends Error {}

const FILE_TAGS = ["include", "render", "layout"] as const;

/** No templates on disk: every lookup misses (file tags are also refused at parse). */
const noFiles = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (file: string): Promise<string> => {
    throw new TemplateError(`templates cannot read files (${file})`);
  },
  readFileSync: (file: string): string => {
    throw new TemplateError(`templates cannot read files (${file})`);
  },
  resolve: (_root: string, file: string) => file,
  sep: "/",
};

/** A sandboxed engine (the login page template adds its own tags to one). */
export function sandboxedEngine(escapeOutput: boolean): Liquid {
  const liquid = new Liquid({
    fs: noFiles,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    dynamicPartials: false,
    ownPropertyOnly: true,
    strictFilters: true,
    parseLimit: PARSE_LIMIT,
    memoryLimit: MEMORY_LIMIT,
    cache: false,
    ...(escapeOutput ? { outputEscape: "escape" as const } : {}),
  });
  for (const tag of FILE_TAGS) {
    liquid.registerTag(tag, {
      parse() {
        throw new TemplateError(`the ${tag} tag is not available in templates (no files)`);
      },
      render() {
        return "";
      },
    });
  }
  return liquid;
}

/** HTML bodies escape every `{{ }}` output (`| raw` opts out); subjects and senders are plain text. */
const html = sandboxedEngine(true);
const plain = sandboxedEngine(false);

/** Parses a source with one of the sandboxed engines; a syntax error or a refused tag is a TemplateError. */
export function parseLiquid(liquid: Liquid, source: string): Template[] {
  try {
    return liquid.parse(source);
  } catch (err) {
    throw new TemplateError(messageOf(err));
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message.split("\n")[0] ?? "invalid template" : String(err)).slice(0, 300);

/** Renders one template source with `vars`; throws TemplateError on a parse error or an exceeded bound. */
export async function renderLiquid(source: string, vars: Record<string, unknown>, kind: "html" | "plain"): Promise<string> {
  const liquid = kind === "html" ? html : plain;
  return renderParsed(liquid, parseLiquid(liquid, source), vars);
}

/** Renders parsed templates within the bounds (nodes, memory, output length); TemplateError past them. */
export async function renderParsed(liquid: Liquid, templates: Template[], vars: Record<string, unknown>): Promise<string> {
  return renderBounded(liquid, templates, vars, false) as Promise<string>;
}

/**
 * The same, synchronously (no async filters or tags are registered): the login page template renders on
 * every page, and liquidjs's synchronous path skips a promise per node.
 */
export function renderParsedSync(liquid: Liquid, templates: Template[], vars: Record<string, unknown>): string {
  return renderBounded(liquid, templates, vars, true) as string;
}

function renderBounded(liquid: Liquid, templates: Template[], vars: Record<string, unknown>, sync: boolean): string | Promise<string> {
  // liquidjs checks its render limiter before every node it renders (captures and loops included): this
  // one counts nodes instead of reading a clock that workerd keeps still during synchronous work.
  let nodes = 0;
  const nodeBudget = {
    check() {
      if (++nodes > MAX_RENDERED_NODES) throw new TemplateError(`the template renders more than ${MAX_RENDERED_NODES} nodes (a loop too long?)`);
    },
    use() {},
  } as unknown as Context["renderLimit"];
  const context = new Context(vars, liquid.options, { sync }, { liquid, renderLimit: nodeBudget });
  const checked = (out: string) => {
    if (out.length > MAX_RENDERED_CHARS) throw new TemplateError(`the rendered template is longer than ${MAX_RENDERED_CHARS} characters`);
    return out;
  };
  const failed = (err: unknown): never => {
    throw err instanceof TemplateError ? err : new TemplateError(messageOf(err));
  };
  if (!sync) return (liquid.render(templates, context) as Promise<string>).then(checked, failed);
  let out: string;
  try {
    out = liquid.renderSync(templates, context);
  } catch (err) {
    return failed(err);
  }
  return checked(out);
}

/** A plain-text part from a rendered HTML body: links kept as "label (url)", tags dropped, entities decoded. */
export function htmlToText(body: string): string {
  const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'", nbsp: " " };
  return body
    .replace(/<(style|script|head)[^>]*>[\s\S]*?<\/\1>/gi, "")
    .replace(/<a\s[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/gi, (_, href: string, label: string) => `${label} (${href})`)
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|h[1-6]|li|tr)>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&(amp|lt|gt|quot|#39|#x27|nbsp);/g, (_, e: string) => entities[e] ?? "")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
