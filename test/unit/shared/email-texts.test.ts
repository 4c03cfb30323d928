import { describe, expect, it } from "vitest";
import { builtInEmail, EMAIL_TEXTS } from "../../../src/shared/i18n/email-texts";
import { emailLanguage } from "../../../src/shared/i18n/negotiate";

const placeholders = (s: string) => [...s.matchAll(/\$\{([A-Za-z]+)\}/g)].map((m) => m[1]).sort();

describe("the built-in emails' texts (issue 29 point 2)", () => {
  it("every language has every email, with English's placeholders, translated", () => {
    const en = EMAIL_TEXTS.en;
    for (const [language, texts] of Object.entries(EMAIL_TEXTS)) {
      expect(Object.keys(texts).sort(), language).toEqual(Object.keys(en).sort());
      for (const [name, text] of Object.entries(texts) as [keyof typeof en, { subject: string; text: string }][]) {
        expect(placeholders(text.text), `${language} ${name}`).toEqual(placeholders(en[name].text));
        expect(placeholders(text.subject), `${language} ${name}`).toEqual(placeholders(en[name].subject));
        expect(text.subject.trim(), `${language} ${name}`).not.toBe("");
        if (language !== "en") expect(text.text, `${language} ${name}`).not.toBe(en[name].text);
      }
    }
  });

  it("fills the placeholders; a regional code uses its language; an unknown one English", () => {
    expect(builtInEmail("pt-BR", "verify_email", { appName: "App", url: "https://x/y" }).text).toContain("Verifique o endereço de e-mail que você usa com App");
    expect(builtInEmail("xx", "reset_email", { appName: "App", email: "a@b.c", url: "https://x" }).subject).toBe("Reset your password");
  });

  it("picks the login's language, else the user's own, else the tenant's default, among the offered locales", () => {
    expect(emailLanguage({ login: { uiLocales: "fr", acceptLanguage: "de" }, user: { user_metadata: { language: "es" } } })).toBe("fr");
    expect(emailLanguage({ login: { acceptLanguage: "de;q=0.9, ja" } })).toBe("ja");
    expect(emailLanguage({ user: { user_metadata: { locale: "pt_BR" } }, enabledLocales: ["en", "pt-BR"] })).toBe("pt-BR");
    expect(emailLanguage({ user: { locale: "de" } })).toBe("de");
    expect(emailLanguage({ user: { user_metadata: { language: "de" } }, enabledLocales: ["es", "en"] })).toBe("es");
    expect(emailLanguage({})).toBe("en");
  });
});
