/**
 * What a page component reads its texts through: one language's texts (with the tenant's custom text) and
 * the page's common placeholders (`${clientName}`, `${companyName}` ...), typed by the English catalogue so
 * a wrong prompt, screen or text id does not compile.
 */
import type { Texts, TextVars } from "./catalogue";
import type { en } from "./languages/en";

type En = typeof en;

/** A page failure: its SPEC §7 code (its text id in kebab case unless `text` names another) and what fills it. */
export interface TextFailure {
  code: string;
  message: string;
  /** The `common/errors` text id, when it is not the code's kebab case. */
  text?: string;
  vars?: TextVars;
}

/** `INVALID_CSRF` → `invalid-csrf`. */
export const textIdOf = (code: string) => code.toLowerCase().replace(/_/g, "-");

export class PageText {
  constructor(
    private readonly texts: Texts,
    private readonly base: TextVars = {},
  ) {}

  get lang(): string {
    return this.texts.lang;
  }

  get dir(): "ltr" | "rtl" {
    return this.texts.dir;
  }

  t<P extends keyof En, S extends keyof En[P] & string>(prompt: P, screen: S, id: keyof En[P][S] & string, vars?: TextVars): string {
    return this.texts.get(prompt, screen, id, vars, this.base);
  }

  /** The catalogue's message for a failure, else the message it carries (a tenant's script, an action's reason). */
  failure(failure: TextFailure): string {
    const id = failure.text ?? textIdOf(failure.code);
    return this.texts.has("common", "errors", id) ? this.texts.get("common", "errors", id, failure.vars, this.base) : failure.message;
  }

  /** The title of an error page for a failure: its own, else "Something went wrong". */
  failureTitle(failure: { code: string; text?: string }): string {
    const id = failure.text ?? textIdOf(failure.code);
    return this.texts.get("common", "error-titles", this.texts.has("common", "error-titles", id) ? id : "something-went-wrong");
  }
}
