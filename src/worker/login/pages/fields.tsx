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

/** A phone number field (E.164): the SMS connection's login and the SMS factor's enrollment; the hint is read with it. */
export const PhoneField: FC<{ label: string; hint: string; value?: string; isInvalid: boolean }> = ({ label, hint, value, isInvalid }) => (
  <div class="field">
    <label for="phone_number">{label}</label>
    <input
      id="phone_number"
      name="phone_number"
      type="tel"
      autocomplete="tel"
      inputmode="tel"
      required
      autofocus
      value={value ?? ""}
      aria-invalid={isInvalid ? "true" : undefined}
      aria-describedby={isInvalid ? "phone-hint form-error" : "phone-hint"}
    />
    <p id="phone-hint" class="hint">
      {hint}
    </p>
  </div>
);
