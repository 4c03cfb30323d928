import type { FC } from "hono/jsx";
import { Layout, type PageShell } from "./layout";

/** Claims whose value is a time in seconds since the epoch: shown with their ISO date too. */
const TIME_CLAIMS = new Set(["iat", "exp", "nbf", "auth_time"]);

function show(name: string, value: unknown): string {
  if (typeof value === "number" && TIME_CLAIMS.has(name)) return `${value} (${new Date(value * 1000).toISOString()})`;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A claim set as a two-column table (JSX escapes every name and value). */
const ClaimsTable: FC<{ caption: string; claims: Record<string, unknown> }> = ({ caption, claims }) => (
  <table>
    <caption class="hint">{caption}</caption>
    <tbody>
      {Object.entries(claims).map(([name, value]) => (
        <tr>
          <th scope="row">{name}</th>
          <td>{show(name, value)}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

export interface InfoPageProps {
  shell: PageShell;
  clientName: string;
  idTokenClaims: Record<string, unknown> | null;
  token: { token_type: string; expires_in: number; scope: string };
  accessTokenHeader: Record<string, unknown> | null;
  accessTokenClaims: Record<string, unknown> | null;
}

/** The test-login landing page: what the application would have received, decoded. */
export const InfoPage: FC<InfoPageProps> = ({ shell, clientName, idTokenClaims, token, accessTokenHeader, accessTokenClaims }) => (
  <Layout shell={shell} title={`Test login | ${clientName}`} wide>
    <h1 id="page-title">It works!</h1>
    <p class="subtitle">The test login to {clientName} succeeded. These are the tokens the application would receive.</p>
    <h2>ID token claims</h2>
    {idTokenClaims ? (
      <ClaimsTable caption="Decoded ID token payload" claims={idTokenClaims} />
    ) : (
      <p>No ID token was issued (the scope did not include openid).</p>
    )}
    <h2>Token details</h2>
    <ClaimsTable caption="Token response" claims={token} />
    {accessTokenHeader ? (
      <>
        <h2>Access token header</h2>
        <pre>{JSON.stringify(accessTokenHeader, null, 2)}</pre>
      </>
    ) : null}
    {accessTokenClaims ? (
      <>
        <h2>Access token claims</h2>
        <ClaimsTable caption="Decoded access token payload" claims={accessTokenClaims} />
      </>
    ) : null}
    <p class="alt">
      <a href="/v2/logout">Log out</a>
    </p>
  </Layout>
);
