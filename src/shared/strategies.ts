/** Connection strategies as the reference platform names them, and what each allows for users. */

/** Database (username/password) connections. */
export const DATABASE_STRATEGY = "auth0";

/** Passwordless connections: one-time codes by email or SMS. */
export const PASSWORDLESS_STRATEGIES: readonly string[] = ["email", "sms"];

/** Enterprise and first-party strategies: identities of these are not social (`isSocial: false`). */
const NOT_SOCIAL = new Set([
  DATABASE_STRATEGY,
  ...PASSWORDLESS_STRATEGIES,
  "ad",
  "adfs",
  "auth0-oidc",
  "custom",
  "google-apps",
  "ip",
  "office365",
  "oidc",
  "okta",
  "pingfederate",
  "samlp",
  "sharepoint",
  "waad",
]);

/** Whether an identity of this strategy is a social one (google-oauth2, github ...). */
export const isSocialStrategy = (strategy: string | null | undefined): boolean => strategy != null && !NOT_SOCIAL.has(strategy);

/** Whether users may be created in a connection of this strategy through the management API. */
export const acceptsManagedUsers = (strategy: string): boolean =>
  strategy === DATABASE_STRATEGY || PASSWORDLESS_STRATEGIES.includes(strategy);
