/**
 * Language codes: the reference platform's list of universal-login languages (what `enabled_locales` and
 * the custom-text routes accept), the languages Gatehouse ships a complete catalogue for, and which of
 * them are written right to left.
 */

/** The reference platform's universal-login language codes (its `PromptLanguageEnum`). */
export const REFERENCE_LOCALES: readonly string[] = [
  "am", "ar", "ar-EG", "ar-SA", "az", "bg", "bn", "bs", "ca-ES", "cnr", "cs", "cy", "da", "de", "el", "en", "en-CA", "es",
  "es-419", "es-AR", "es-MX", "et", "eu-ES", "fa", "fi", "fr", "fr-CA", "fr-FR", "gl-ES", "gu", "he", "hi", "hr", "hu", "hy",
  "id", "is", "it", "ja", "ka", "kk", "kn", "ko", "lt", "lv", "mk", "ml", "mn", "mr", "ms", "my", "nb", "nl", "nn", "no",
  "pa", "pl", "pt", "pt-BR", "pt-PT", "ro", "ru", "sk", "sl", "so", "sq", "sr", "sv", "sw", "ta", "te", "th", "tl", "tr",
  "uk", "ur", "vi", "zgh", "zh-CN", "zh-HK", "zh-TW",
];

const BY_LOWER = new Map(REFERENCE_LOCALES.map((code) => [code.toLowerCase(), code]));

/** The reference spelling of a language code (case-insensitive match), or null when it is not one. */
export function referenceLocale(code: string): string | null {
  return BY_LOWER.get(code.toLowerCase()) ?? null;
}

/** Languages with a complete Gatehouse catalogue, English first (the default). */
export const SHIPPED_LANGUAGES = ["en", "de", "fr", "es", "pt", "ja", "ar"] as const;
export type ShippedLanguage = (typeof SHIPPED_LANGUAGES)[number];

const RTL = new Set(["ar", "he", "fa", "ur"]);

/** `rtl` for a right-to-left language (by its primary subtag), else `ltr`. */
export const directionOf = (code: string): "ltr" | "rtl" => (RTL.has(primary(code)) ? "rtl" : "ltr");

/** The primary language subtag, lower case (`pt-BR` → `pt`). */
export const primary = (code: string) => code.split("-")[0]?.toLowerCase() ?? "";

/** The shipped catalogue a language code renders with (`pt-BR` → `pt`, `fr-CA` → `fr`), or null. */
export function catalogueFor(code: string): ShippedLanguage | null {
  const base = primary(code);
  return (SHIPPED_LANGUAGES as readonly string[]).includes(base) ? (base as ShippedLanguage) : null;
}
