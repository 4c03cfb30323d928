/**
 * The universal-login page template (issue 29 point 5): a Liquid document the tenant stores with
 * PUT /api/v2/branding/templates/universal-login, rendered around every login page. It must hold one
 * `{%- auth0:head -%}` (the page's <head> content: charset, title, the nonce-tagged style sheet) and at least
 * one `{%- auth0:widget -%}` (the page's card), as on the reference platform. It runs in the email templates'
 * sandbox (../../messaging/liquid.ts: no files, bounded nodes, memory and output); every `{{ }}` output is
 * HTML-escaped. The page's CSP still applies, so the template's own scripts and styles do not run: only the
 * page's nonce-tagged sheet does. A template that fails at render time is logged and the plain page served.
 */
import type { Liquid, Template } from "liquidjs";
import { parseLiquid, renderParsedSync, sandboxedEngine, TemplateError } from "../../messaging/liquid";

const HEAD = "\u0000gh:auth0-head\u0000";
const WIDGET = "\u0000gh:auth0-widget\u0000";

const engine: Liquid = sandboxedEngine(true);
// `{% auth0:head %}` is the tag `auth0` with the argument `:head` (a colon does not belong to a tag name).
engine.registerTag("auth0", {
  parse(token) {
    const part = token.args.trim();
    if (part !== ":head" && part !== ":widget") throw new TemplateError(`unknown tag auth0${part}: use auth0:head or auth0:widget`);
    this.part = part;
  },
  render(_ctx, emitter) {
    emitter.write(this.part === ":head" ? HEAD : WIDGET);
  },
});

const HEAD_TAG = /\{%-?\s*auth0:head\s*-?%\}/g;
const WIDGET_TAG = /\{%-?\s*auth0:widget\s*-?%\}/g;

/** Whether the source holds the reference's required tags: exactly one head, at least one widget. */
export function hasRequiredTags(source: string): boolean {
  return (source.match(HEAD_TAG)?.length ?? 0) === 1 && (source.match(WIDGET_TAG)?.length ?? 0) >= 1;
}

/** Parsed templates by source: a tenant's template is parsed once per isolate, not per page. */
const compiled = new Map<string, Template[]>();
const MAX_COMPILED = 16;

export function compileTemplate(source: string): Template[] {
  let templates = compiled.get(source);
  if (!templates) {
    templates = parseLiquid(engine, source);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(source, templates);
  }
  return templates;
}

/**
 * The template rendered with `vars`, split around the head and widget tags (null: it cannot be used). The
 * variables hold nothing per request (no user, no nonce): the output is the same for every render of one
 * page of one application, so it is kept per source and variables and the Liquid runs once, not per page.
 */
const wrappers = new Map<string, { pieces: string[][] | null; size: number }>();
/** Characters the kept wrappers may hold in all (keys and outputs), oldest dropped first. @default 4,000,000 */
const MAX_WRAPPER_CHARS = 4_000_000;
let wrapperChars = 0;

function wrapper(source: string, vars: Record<string, unknown>): string[][] | null {
  const key = `${JSON.stringify(vars)}\u0000${source}`;
  const hit = wrappers.get(key);
  if (hit) return hit.pieces;
  let pieces: string[][] | null = null;
  try {
    const heads = renderParsedSync(engine, compileTemplate(source), vars).split(HEAD);
    pieces = heads.length === 2 ? heads.map((part) => part.split(WIDGET)) : null;
    if (pieces && pieces.reduce((n, p) => n + p.length, 0) < 3) pieces = null;
  } catch (err) {
    console.warn("universal-login template not rendered:", err instanceof Error ? err.message : String(err));
  }
  const size = key.length + (pieces?.reduce((n, part) => n + part.reduce((m, p) => m + p.length, 0), 0) ?? 0);
  for (const [oldKey, old] of wrappers) {
    if (wrapperChars + size <= MAX_WRAPPER_CHARS) break;
    wrappers.delete(oldKey);
    wrapperChars -= old.size;
  }
  if (size <= MAX_WRAPPER_CHARS) {
    wrappers.set(key, { pieces, size });
    wrapperChars += size;
  }
  return pieces;
}

/** The reference's prompt (and screen) name of a /u2 page path: /u2/mfa/otp/challenge is mfa-otp, screen challenge. */
export function promptOf(path: string): { name: string; screen: { name: string } } {
  const parts = path.replace(/^\/u2\/?/, "").split("/").filter(Boolean);
  const first = parts[0] ?? "login";
  const name = first === "mfa" && parts[1] ? `mfa-${parts[1]}` : first;
  const rest = parts.slice(first === "mfa" ? 2 : 1);
  return { name, screen: { name: rest.length ? rest.join("-") : name } };
}

/**
 * The page rendered inside the template: `page` is the plain page (<html><head>…</head><body>…</body></html>),
 * its <head> content replaces `auth0:head` and its <body> content each `auth0:widget`. Null when the template
 * cannot be used (the caller serves the plain page).
 */
export function renderInTemplate(source: string, page: string, vars: Record<string, unknown>): string | null {
  const headStart = page.indexOf("<head>");
  const headEnd = page.indexOf("</head>");
  const bodyStart = page.indexOf("<body>");
  const bodyEnd = page.lastIndexOf("</body>");
  if (headStart < 0 || headEnd < headStart || bodyStart < headEnd || bodyEnd < bodyStart) return null;
  // The page's own language and direction (the page text chooses them), as the reference's `locale`.
  const opening = page.slice(0, headStart);
  const locale = /\slang="([^"]*)"/.exec(opening)?.[1] ?? "en";
  const dir = /\sdir="([^"]*)"/.exec(opening)?.[1];
  const pieces = wrapper(source, { ...vars, locale, ...(dir ? { dir } : {}) });
  if (!pieces) return null;
  const widget = page.slice(bodyStart + 6, bodyEnd);
  // split/join, not replace(): the page may hold `$&` and the like.
  return pieces.map((p) => p.join(widget)).join(page.slice(headStart + 6, headEnd));
}
