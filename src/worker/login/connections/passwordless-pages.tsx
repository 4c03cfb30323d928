import type { FC } from "hono/jsx";
import { EmailField } from "../pages/fields";
import { FormError, Layout, type PageShell } from "../pages/layout";
import type { FormFailure } from "../pages/parts";
import type { PasswordlessStrategy } from "./offer";

interface PasswordlessProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  connection: PasswordlessStrategy;
  error?: FormFailure;
  /** Whether the page is the login page itself (no other connection): no "Back to log in" link then. */
  isOnlyConnection: boolean;
}

const query = (state: string, connection: PasswordlessStrategy) => `?state=${encodeURIComponent(state)}&connection=${connection}`;

/** The phone number field of the SMS connection (E.164). */
const PhoneField: FC<{ value?: string; isInvalid: boolean }> = ({ value, isInvalid }) => (
  <div class="field">
    <label for="phone_number">Phone number</label>
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
      aria-describedby={isInvalid ? "form-error phone-hint" : "phone-hint"}
    />
    <p id="phone-hint" class="hint">
      With the country code, e.g. +14155550100.
    </p>
  </div>
);

/** Passwordless, first step: the address (or phone number) the one-time code goes to. */
export const PasswordlessStartPage: FC<PasswordlessProps & { identifier?: string }> = (p) => {
  const isEmail = p.connection === "email";
  return (
    <Layout shell={p.shell} title={`Log in | ${p.clientName}`}>
      <h1 id="page-title">Welcome</h1>
      <p class="subtitle">
        {isEmail ? `Enter your email address to receive a code and continue to ${p.clientName}.` : `Enter your phone number to receive a code and continue to ${p.clientName}.`}
      </p>
      <form method="post" action={`/u2/passwordless${query(p.state, p.connection)}`} novalidate>
        {p.error ? <FormError code={p.error.code} message={p.error.message} /> : null}
        <input type="hidden" name="_csrf" value={p.csrf} />
        {isEmail ? <EmailField value={p.identifier} autocomplete="email" hasFocus isInvalid={Boolean(p.error)} /> : <PhoneField value={p.identifier} isInvalid={Boolean(p.error)} />}
        <button type="submit">Send code</button>
      </form>
      {p.isOnlyConnection ? null : (
        <p class="alt">
          <a href={`/u2/login?state=${encodeURIComponent(p.state)}`}>Other ways to log in</a>
        </p>
      )}
    </Layout>
  );
};

/** Passwordless, second step: the six-digit code that was sent. */
export const PasswordlessCodePage: FC<PasswordlessProps & { identifier: string }> = (p) => (
  <Layout shell={p.shell} title={`Enter your code | ${p.clientName}`}>
    <h1 id="page-title">Enter your code</h1>
    <p class="subtitle">{`We sent a code to ${p.identifier}. It expires in 5 minutes.`}</p>
    <form method="post" action={`/u2/passwordless/code${query(p.state, p.connection)}`} novalidate>
      {p.error ? <FormError code={p.error.code} message={p.error.message} /> : null}
      <input type="hidden" name="_csrf" value={p.csrf} />
      <input type="hidden" name="identifier" value={p.identifier} />
      <div class="field">
        <label for="code">Code</label>
        <input
          id="code"
          name="code"
          type="text"
          autocomplete="one-time-code"
          inputmode="numeric"
          pattern="[0-9]{6}"
          maxlength={6}
          required
          autofocus
          aria-invalid={p.error ? "true" : undefined}
          aria-describedby={p.error ? "form-error" : undefined}
        />
      </div>
      <button type="submit">Continue</button>
    </form>
    <p class="alt">
      <a href={`/u2/passwordless${query(p.state, p.connection)}`}>Send a new code</a>
    </p>
  </Layout>
);
