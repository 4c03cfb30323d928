/**
 * Parts shared by several login pages (issue 26: login-page.tsx and webauthn-pages.tsx both use them, so
 * they live here and neither page imports the other).
 */

/** A form's failure as a page shows it. */
export interface FormFailure {
  /** Stable code (SPEC §7 table), exposed as data-error-code. */
  code: string;
  /** The English text, shown when the catalogue has none for the code (a tenant script's own message). */
  message: string;
  /** The `common/errors` text id when it is not the code's kebab case, and its placeholders' values. */
  text?: string;
  vars?: Readonly<Record<string, string | number | undefined>>;
}
