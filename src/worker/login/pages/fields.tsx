import type { FC } from "hono/jsx";

/** The email field of the login and signup forms; invalid fields point at the form's error message. */
export const EmailField: FC<{
  /** The field's label and the locked-address hint, in the page's language. */
  label: string;
  lockedHint?: string;
  value?: string;
  autocomplete: "username" | "email" | "username webauthn";
  hasFocus: boolean;
  isInvalid: boolean;
  isLocked?: boolean;
}> = ({
  label,
  lockedHint,
  value,
  autocomplete,
  hasFocus,
  isInvalid,
  isLocked,
}) => (
  <div class="field">
    <label for="email">{label}</label>
    <input
      id="email"
      name="email"
      type="email"
      autocomplete={autocomplete}
      inputmode="email"
      required
      autofocus={hasFocus}
      value={value ?? ""}
      readonly={isLocked ? true : undefined}
      aria-invalid={isInvalid ? "true" : undefined}
      aria-describedby={isInvalid ? "form-error" : isLocked ? "email-locked" : undefined}
    />
    {isLocked ? (
      <p id="email-locked" class="hint">
        {lockedHint}
      </p>
    ) : null}
  </div>
);

/** The password field of the login and signup forms; a hint (signup's policy) goes below it. */
export const PasswordField: FC<{
  label: string;
  autocomplete: "current-password" | "new-password";
  hasFocus?: boolean;
  minLength?: number;
  isInvalid: boolean;
  describedBy?: string;
  children?: unknown;
}> = ({ label, autocomplete, hasFocus, minLength, isInvalid, describedBy, children }) => (
  <div class="field">
    <label for="password">{label}</label>
    <input
      id="password"
      name="password"
      type="password"
      autocomplete={autocomplete}
      required
      minlength={minLength}
      autofocus={hasFocus}
      aria-invalid={isInvalid ? "true" : undefined}
      aria-describedby={describedBy}
    />
    {children}
  </div>
);
