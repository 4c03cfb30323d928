import type { ConsoleContext } from "./context";

/**
 * Whether the operator may make a change (issue 30: "a Viewer cannot change anything (no button)"): true
 * when the token carries every named management scope. Only decides what a page offers; the API refuses a
 * forged request on its own.
 */
export function can(c: ConsoleContext, ...scopes: string[]): boolean {
  const granted = c.var.api?.scopes;
  return !!granted && scopes.every((s) => granted.has(s));
}
