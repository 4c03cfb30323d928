/**
 * The universal-login text catalogue (issue 29 point 3): every text of every page, keyed by the reference
 * platform's prompt, screen and text id, in each shipped language, with a tenant's custom text on top.
 *
 * Cost: a language's texts are one flat Map built once per isolate; a tenant's overrides are merged into a
 * copy once per (tenant, configuration version, language) and cached, so a page render does Map lookups
 * only (and a placeholder substitution where the text has one).
 */
import { ar } from "./languages/ar";
import { de } from "./languages/de";
import { type CatalogueShape, en } from "./languages/en";
import { es } from "./languages/es";
import { fr } from "./languages/fr";
import { ja } from "./languages/ja";
import { pt } from "./languages/pt";
import { catalogueFor, directionOf, type ShippedLanguage } from "./locales";

export const CATALOGUES: Readonly<Record<ShippedLanguage, CatalogueShape>> = { en, de, fr, es, pt, ja, ar };

type En = typeof en;
export type PromptName = keyof En;
/** A tenant's custom text: prompt → language → screen → text id → text. */
export type CustomTextStore = Record<string, Record<string, Record<string, Record<string, string>>>>;
export type TextVars = Readonly<Record<string, string | number | undefined>>;

const keyOf = (prompt: string, screen: string, id: string) => `${prompt}/${screen}/${id}`;

/** The prompts, their screens and text ids (from English, the source). */
export function screensOf(prompt: string): Record<string, Record<string, string>> | null {
  return Object.hasOwn(en, prompt) ? (en[prompt as PromptName] as Record<string, Record<string, string>>) : null;
}

function flatten(catalogue: CatalogueShape): Map<string, string> {
  const map = new Map<string, string>();
  for (const [prompt, screens] of Object.entries(catalogue)) {
    for (const [screen, texts] of Object.entries(screens as Record<string, Record<string, string>>)) {
      for (const [id, text] of Object.entries(texts)) map.set(keyOf(prompt, screen, id), text);
    }
  }
  return map;
}

const PLACEHOLDER = /\$\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** One language's texts, ready to look up. */
export class Texts {
  constructor(
    /** The language code the page declares (`<html lang>`): the tenant's offered code, e.g. `pt-BR`. */
    readonly lang: string,
    readonly dir: "ltr" | "rtl",
    private readonly map: ReadonlyMap<string, string>,
  ) {}

  /** A text with its `${name}` placeholders filled from `vars`, then `base` (an unknown name reads empty). */
  get(prompt: string, screen: string, id: string, vars?: TextVars, base?: TextVars): string {
    const text = this.map.get(keyOf(prompt, screen, id)) ?? "";
    if (!text.includes("${")) return text;
    return text.replace(PLACEHOLDER, (_, name: string) => String(vars?.[name] ?? base?.[name] ?? ""));
  }

  has(prompt: string, screen: string, id: string): boolean {
    return this.map.has(keyOf(prompt, screen, id));
  }
}

const base = new Map<ShippedLanguage, Map<string, string>>();
function baseMap(language: ShippedLanguage): Map<string, string> {
  let map = base.get(language);
  if (!map) {
    map = flatten(CATALOGUES[language]);
    base.set(language, map);
  }
  return map;
}

const merged = new Map<string, Texts>();
const MERGED_CAP = 512;

/**
 * The texts of a language code (`fr`, `pt-BR` ...; unknown codes read English) with a tenant's custom text
 * for that exact code merged in. `cacheKey` names the tenant's configuration version: the merge runs once per key.
 */
export function textsFor(lang: string, custom?: CustomTextStore | null, cacheKey?: string): Texts {
  const key = `${cacheKey ?? ""}|${lang}`;
  const cached = merged.get(key);
  if (cached) return cached;
  const language = catalogueFor(lang) ?? "en";
  const overrides: [string, string][] = [];
  if (custom) {
    for (const [prompt, languages] of Object.entries(custom)) {
      const screens = languages?.[lang];
      if (!screens) continue;
      for (const [screen, texts] of Object.entries(screens)) {
        for (const [id, text] of Object.entries(texts ?? {})) if (typeof text === "string") overrides.push([keyOf(prompt, screen, id), text]);
      }
    }
  }
  let map = baseMap(language);
  if (overrides.length) {
    map = new Map(map);
    for (const [k, text] of overrides) map.set(k, text);
  }
  const texts = new Texts(lang, directionOf(lang), map);
  // Without a cache key (no tenant), only override-free texts are kept: they are the same for everyone.
  if (cacheKey !== undefined || !overrides.length) {
    if (merged.size >= MERGED_CAP) merged.delete(merged.keys().next().value as string);
    merged.set(key, texts);
  }
  return texts;
}
