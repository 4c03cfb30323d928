import type { FC } from "hono/jsx";
import { Layout, type PageShell } from "./layout";

export interface ConsentPageProps {
  shell: PageShell;
  state: string;
  csrf: string;
  clientName: string;
  /** Who is asked (their email or name). */
  userLabel: string;
  scopes: { value: string; description: string }[];
}

/**
 * The consent page (issue 29 point 2): what the application asks for, in the API's own words, and two
 * buttons posting the decision; "Decline" answers the application `access_denied`.
 */
export const ConsentPage: FC<ConsentPageProps> = ({ shell, state, csrf, clientName, userLabel, scopes }) => (
  <Layout shell={shell} title={`Authorize ${clientName}`}>
    <h1 id="page-title">Authorize {clientName}</h1>
    <p class="subtitle">
      Hi {userLabel}, {clientName} is asking for access to your account.
    </p>
    {scopes.length ? (
      <>
        <h2 id="scopes-heading">It will be able to use</h2>
        <ul id="consent-scopes" class="scopes" aria-labelledby="scopes-heading">
          {scopes.map((s) => (
            <li data-scope={s.value}>{s.description}</li>
          ))}
        </ul>
      </>
    ) : (
      <p>It will know who you are.</p>
    )}
    <form method="post" action={`/u2/consent?state=${encodeURIComponent(state)}`}>
      <input type="hidden" name="_csrf" value={csrf} />
      <button type="submit" name="action" value="accept">
        Accept
      </button>
      <button type="submit" name="action" value="deny" class="secondary">
        Decline
      </button>
    </form>
  </Layout>
);
