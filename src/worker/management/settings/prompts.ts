/**
 * The reference platform's prompts routes (issue 29 point 3): GET|PATCH /prompts (universal_login_experience,
 * identifier_first, webauthn_platform_first_factor), GET|PUT /prompts/{prompt}/custom-text/{language} (a
 * tenant's overrides of any catalogue text, plain text escaped when rendered) and GET|PUT
 * /prompts/{prompt}/partials. Prompt, language, screen and text id are checked against the catalogue: an
 * unknown one is a 400 in the reference's error shape, and nothing is stored.
 */
import { z } from "zod";
import { problem } from "../../../shared/errors";
import { screensOf } from "../../../shared/i18n/catalogue";
import { REFERENCE_LOCALES } from "../../../shared/i18n/locales";
import { PROMPTS_DEFAULTS, type PromptsRecord, updatePromptsBody } from "../../../shared/i18n/prompts-schema";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** The reference platform's prompt names (its PromptGroupNameEnum): custom text of one Gatehouse has no screens for reads {}. */
const REFERENCE_PROMPTS = new Set([
  "login", "login-id", "login-password", "login-passwordless", "login-email-verification", "signup", "signup-id", "signup-password",
  "phone-identifier-enrollment", "phone-identifier-challenge", "email-identifier-challenge", "reset-password", "custom-form", "consent",
  "customized-consent", "logout", "mfa-push", "mfa-otp", "mfa-voice", "mfa-phone", "mfa-webauthn", "mfa-sms", "mfa-email",
  "mfa-recovery-code", "mfa", "status", "device-flow", "email-verification", "email-otp-challenge", "organizations", "invitation",
  "common", "passkeys", "captcha", "brute-force-protection",
]);

/** The prompts whose screens take partials, and the reference's insertion points. */
const PARTIAL_SCREENS: Record<string, readonly string[]> = { login: ["login"], signup: ["signup"] };
export const INSERTION_POINTS = ["form-content-start", "form-content-end", "form-footer-start", "form-footer-end", "secondary-actions-start", "secondary-actions-end"];

/** A text or partial: plain text up to 5000 characters (the page escapes it). */
const MAX_TEXT = 5000;

const present = (record: PromptsRecord) => ({ ...PROMPTS_DEFAULTS, ...record.settings });

function promptOf(prompt: string): string {
  if (!REFERENCE_PROMPTS.has(prompt) && !screensOf(prompt)) throw problem("unknown_prompt", { prompt: prompt.slice(0, 64) });
  return prompt;
}

function languageOf(language: string): string {
  if (!REFERENCE_LOCALES.includes(language)) throw problem("unknown_prompt_language", { language: language.slice(0, 16) });
  return language;
}

const typeName = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

/** A body of screens of string values (`{ screen: { id: "text" } }`), each screen and id one `allowed` names. */
function nested(body: unknown, prompt: string, allowed: (screen: string) => readonly string[] | null): Record<string, Record<string, string>> {
  if (typeName(body) !== "object") throw problem("invalid_prompt_text", { detail: `Expected type object but found type ${typeName(body)}`, property: "body" });
  const out: Record<string, Record<string, string>> = {};
  for (const [screen, texts] of Object.entries(body as Record<string, unknown>)) {
    const ids = allowed(screen);
    if (!ids) throw problem("unknown_prompt_screen", { screen: screen.slice(0, 64), prompt });
    if (typeName(texts) !== "object") throw problem("invalid_prompt_text", { detail: `Expected type object but found type ${typeName(texts)}`, property: screen.slice(0, 64) });
    const kept: Record<string, string> = {};
    for (const [id, text] of Object.entries(texts as Record<string, unknown>)) {
      if (!ids.includes(id)) throw problem("unknown_prompt_text", { text: id.slice(0, 64), screen });
      const property = `${screen}.${id}`;
      if (typeof text !== "string") throw problem("invalid_prompt_text", { detail: `Expected type string but found type ${typeName(text)}`, property });
      if (text.length > MAX_TEXT) throw problem("invalid_prompt_text", { detail: `String is too long (${text.length} chars), maximum ${MAX_TEXT}`, property });
      kept[id] = text;
    }
    out[screen] = kept;
  }
  return out;
}

/** Any JSON body: the checks above give the reference's messages. */
const anyObject = z.unknown();

export const promptRoutes = [
  defineRoute({
    method: "get",
    path: "/prompts",
    scope: "read:prompts",
    summary: "The universal-login settings: universal_login_experience (new), identifier_first, webauthn_platform_first_factor",
    status: 200,
    async handler(c) {
      return c.json(present(await targetTenant(c).tenantSettings().prompts()));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/prompts",
    scope: "update:prompts",
    summary: "Update the universal-login settings (stored and shown; Gatehouse's pages ask for the identifier and password together)",
    body: updatePromptsBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      return c.json(present(await targetTenant(c).tenantSettings(auditContext(c)).updatePrompts(body)));
    },
  }),
  defineRoute({
    method: "get",
    path: "/prompts/{prompt}/custom-text/{language}",
    scope: "read:prompts",
    summary: "A prompt's custom text in one language: { screen: { textId: text } }, {} when none is set",
    status: 200,
    async handler(c, { params }) {
      const prompt = promptOf(params.prompt);
      const language = languageOf(params.language);
      return c.json((await targetTenant(c).tenantSettings().prompts()).custom_text?.[prompt]?.[language] ?? {});
    },
  }),
  defineRoute({
    method: "put",
    path: "/prompts/{prompt}/custom-text/{language}",
    scope: "update:prompts",
    summary: "Replace a prompt's custom text in one language (screens and text ids of the catalogue; plain text, escaped on the page)",
    body: anyObject,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body, params }) {
      const prompt = promptOf(params.prompt);
      const language = languageOf(params.language);
      const screens = screensOf(prompt);
      const texts = nested(body, prompt, (screen) => (screens && Object.hasOwn(screens, screen) ? Object.keys(screens[screen] ?? {}) : null));
      const record = await targetTenant(c).tenantSettings(auditContext(c)).setCustomText(prompt, language, texts);
      return c.json(record.custom_text?.[prompt]?.[language] ?? {});
    },
  }),
  defineRoute({
    method: "get",
    path: "/prompts/{prompt}/partials",
    scope: "read:prompts",
    summary: "A prompt's partials: { screen: { insertionPoint: content } }, {} when none is set",
    status: 200,
    async handler(c, { params }) {
      const prompt = promptOf(params.prompt);
      return c.json((await targetTenant(c).tenantSettings().prompts()).partials?.[prompt] ?? {});
    },
  }),
  defineRoute({
    method: "put",
    path: "/prompts/{prompt}/partials",
    scope: "update:prompts",
    summary: "Replace a prompt's partials (login and signup screens; the reference's insertion points; shown as escaped text)",
    body: anyObject,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body, params }) {
      const prompt = promptOf(params.prompt);
      const screens = PARTIAL_SCREENS[prompt] ?? [];
      const partials = nested(body, prompt, (screen) => (screens.includes(screen) ? INSERTION_POINTS : null));
      const record = await targetTenant(c).tenantSettings(auditContext(c)).setPartials(prompt, partials);
      return c.json(record.partials?.[prompt] ?? {});
    },
  }),
];
