import { describe, expect, it } from "vitest";
import { CATALOGUES, textsFor } from "../../../src/shared/i18n/catalogue";
import { acceptedLanguages, negotiateLocale } from "../../../src/shared/i18n/negotiate";
import { SHIPPED_LANGUAGES } from "../../../src/shared/i18n/locales";

/** Every `prompt/screen/id` key of a catalogue with its text. */
function flat(catalogue: object): Map<string, string> {
  const out = new Map<string, string>();
  for (const [prompt, screens] of Object.entries(catalogue)) {
    for (const [screen, texts] of Object.entries(screens as object)) {
      for (const [id, text] of Object.entries(texts as object)) out.set(`${prompt}/${screen}/${id}`, text as string);
    }
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]).sort();

describe("the universal-login catalogue", () => {
  const english = flat(CATALOGUES.en);

  it("ships English and six more languages, one of them right to left", () => {
    expect([...SHIPPED_LANGUAGES].sort()).toEqual(["ar", "de", "en", "es", "fr", "ja", "pt"]);
    expect(english.size).toBeGreaterThan(200);
    expect(textsFor("ar").dir).toBe("rtl");
    expect(textsFor("fr").dir).toBe("ltr");
  });

  for (const language of SHIPPED_LANGUAGES.filter((l) => l !== "en")) {
    it(`${language}: exactly English's keys, each a non-empty translation with English's placeholders`, () => {
      const texts = flat(CATALOGUES[language]);
      expect([...texts.keys()].filter((k) => !english.has(k)), "extra keys").toEqual([]);
      expect([...english.keys()].filter((k) => !texts.has(k)), "missing keys").toEqual([]);
      for (const [key, text] of texts) {
        expect(text.trim(), key).not.toBe("");
        expect(placeholders(text), key).toEqual(placeholders(english.get(key) ?? ""));
      }
      // Translated, not copied: most texts differ from English (names such as "SMS" or "API:" may not).
      const same = [...texts].filter(([key, text]) => text === english.get(key)).length;
      expect(same / texts.size).toBeLessThan(0.1);
    });
  }

  it("fills placeholders, and a tenant's override replaces one text of one language only", () => {
    const fr = textsFor("fr");
    expect(fr.get("login", "login", "description", { clientName: "Acme" })).toBe("Connectez-vous pour continuer vers Acme.");
    const custom = { login: { fr: { login: { title: "Salut ${clientName}" } } } };
    const overridden = textsFor("fr", custom, "tenant-x:1");
    expect(overridden.get("login", "login", "title", { clientName: "Acme" })).toBe("Salut Acme");
    expect(overridden.get("login", "login", "buttonText")).toBe("Continuer");
    expect(textsFor("de", custom, "tenant-x:1").get("login", "login", "title")).toBe("Willkommen");
    // Cached per (tenant version, language): the same object, no merge per request.
    expect(textsFor("fr", custom, "tenant-x:1")).toBe(overridden);
  });
});

describe("language negotiation", () => {
  it("ui_locales first (its first offered entry), then Accept-Language by q, then the tenant's first locale", () => {
    expect(negotiateLocale({ uiLocales: "xx fr-CA de", acceptLanguage: "de" })).toBe("fr");
    expect(negotiateLocale({ acceptLanguage: "en;q=0.5, de;q=0.9, fr;q=0.8" })).toBe("de");
    expect(negotiateLocale({ acceptLanguage: "it, ja;q=0.2" })).toBe("ja");
    expect(negotiateLocale({ acceptLanguage: "de;q=0" })).toBe("en");
    expect(negotiateLocale({ acceptLanguage: "it", enabledLocales: ["es", "fr"] })).toBe("es");
  });

  it("only the tenant's enabled_locales, in its spelling (pt-BR), when it set them", () => {
    expect(negotiateLocale({ uiLocales: "de", acceptLanguage: "fr", enabledLocales: ["en", "fr"] })).toBe("fr");
    expect(negotiateLocale({ acceptLanguage: "pt", enabledLocales: ["en", "pt-BR"] })).toBe("pt-BR");
    expect(negotiateLocale({ uiLocales: "ar", enabledLocales: ["it"] })).toBe("en");
  });

  it("reads Accept-Language defensively", () => {
    expect(acceptedLanguages("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")).toEqual(["fr-CH", "fr", "en", "de", "*"]);
    expect(acceptedLanguages("<script>, de;q=abc, ;;;")).toEqual(["de"]);
    expect(acceptedLanguages("x".repeat(5000))).toEqual([]);
  });
});
