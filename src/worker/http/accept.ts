/**
 * Content negotiation for errors (issue 29 point 6): whether a request asked for an HTML page rather than
 * JSON. Only explicit media types count: a browser's navigation lists `text/html` (quality 1) and reaches
 * JSON only through a wildcard, while `fetch()` (`*∕*`) and API clients (`application/json`) keep JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  let html = 0;
  let json = 0;
  for (const part of accept.split(",").slice(0, 32)) {
    const [type = "", ...params] = part.trim().toLowerCase().split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    const mediaType = type.trim();
    if (mediaType === "text/html" || mediaType === "application/xhtml+xml") html = Math.max(html, q);
    else if (mediaType === "application/json") json = Math.max(json, q);
  }
  return html > 0 && html > json;
}
