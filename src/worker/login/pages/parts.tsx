/**
 * Parts shared by several login pages (issue 26: login-page.tsx and webauthn-pages.tsx both use them, so
 * they live here and neither page imports the other).
 */

/** A form's failure as a page shows it. */
export interface FormFailure {
  /** Stable code (SPEC §7 table), exposed as data-error-code. */
  code: string;
  message: string;
}
