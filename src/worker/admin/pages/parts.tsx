import type { FC } from "hono/jsx";
import { CONSOLE_PATH } from "../../../shared/console";

/** The base path of a tenant's screens. */
export const tenantPath = (tenant: string, rest = "") => `${CONSOLE_PATH}/t/${encodeURIComponent(tenant)}${rest}`;

/** The API's refusal, as the API worded it (issue 30: errors are exactly the API's). */
export const ApiError: FC<{ message: string | null | undefined }> = ({ message }) =>
  message ? (
    <p class="error" role="alert">
      {message}
    </p>
  ) : null;

export const Notice: FC<{ message: string | null | undefined }> = ({ message }) =>
  message ? (
    <p class="notice" role="status">
      {message}
    </p>
  ) : null;

/** Previous/next links of an offset-paged list. */
export const Pager: FC<{ base: string; page: number; perPage: number; total: number; extra?: Record<string, string> }> = ({ base, page, perPage, total, extra }) => {
  const link = (p: number) => `${base}?${new URLSearchParams({ ...(extra ?? {}), page: String(p) })}`;
  const last = Math.max(0, Math.ceil(total / perPage) - 1);
  return (
    <nav class="pager" aria-label="Pages">
      {page > 0 ? <a href={link(page - 1)}>Previous page</a> : null}
      <span class="muted">
        Page {page + 1} of {last + 1} ({total} in all)
      </span>
      {page < last ? <a href={link(page + 1)}>Next page</a> : null}
    </nav>
  );
};

/** A text field with its label (and an id derived from its name). */
export const Field: FC<{ name: string; label: string; value?: string | undefined; type?: string; required?: boolean; hint?: string; multiline?: boolean }> = (p) => (
  <div class="field">
    <label for={`f-${p.name}`}>{p.label}</label>
    {p.multiline ? (
      <textarea id={`f-${p.name}`} name={p.name} aria-describedby={p.hint ? `h-${p.name}` : undefined}>
        {p.value ?? ""}
      </textarea>
    ) : (
      <input id={`f-${p.name}`} name={p.name} type={p.type ?? "text"} value={p.value ?? ""} required={p.required} aria-describedby={p.hint ? `h-${p.name}` : undefined} />
    )}
    {p.hint ? (
      <p class="hint" id={`h-${p.name}`}>
        {p.hint}
      </p>
    ) : null}
  </div>
);

/** A page number from the query (0-based, bounded). */
export function pageOf(value: string | undefined): number {
  const n = Number(value ?? 0);
  return Number.isInteger(n) && n >= 0 && n < 10_000 ? n : 0;
}

/** One URL per line (or comma-separated) into a list. */
export function listOf(value: unknown): string[] {
  return typeof value === "string"
    ? value
        .split(/[\n,]/)
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

export const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** A short date and time (UTC) for lists. */
export const when = (value: unknown): string => (typeof value === "string" || typeof value === "number" ? new Date(value).toISOString().replace("T", " ").slice(0, 16) : "");
