import { OAuthError } from "../../shared/errors";
import { browserOrigins, type ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";

const normalizeOrigin = (origin: string) => origin.replace(/\/$/, "");

/**
 * A browser request (one with an Origin) must come from the application's own web_origins or
 * allowed_origins. Requests without Origin come from servers, where CORS has no meaning.
 */
export function assertClientOrigin(c: AppContext, client: ClientRecord): void {
  const origin = c.req.header("origin");
  if (origin === undefined) return;
  if (!browserOrigins(client).includes(normalizeOrigin(origin))) {
    throw new OAuthError("access_denied", `Origin ${origin} is not allowed for this application`, 403);
  }
}
