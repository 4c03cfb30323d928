import { reservedKeyIn } from "../../shared/object-keys";
import type { Context } from "hono";
import type { z } from "zod";
import { OAuthError, problem } from "../../shared/errors";

/** Largest request body accepted anywhere (management and OAuth). */
export const MAX_BODY_BYTES = 100 * 1024;

/** Reads the raw body as text, refusing anything over MAX_BODY_BYTES with a 413 before buffering it all. */
export async function readBodyText(request: Request, tooLarge: () => Error): Promise<string> {
  return decodeUtf8(await readBodyBytes(request, MAX_BODY_BYTES, tooLarge));
}

/**
 * Reads the raw body, refusing it (`tooLarge`) as soon as it exceeds `limit` bytes, before buffering it all.
 * A declared length frames the body (the runtime enforces it), so such a body is read in one native call.
 */
export async function readBodyBytes(request: Request, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw tooLarge();
  if (!request.body) return new Uint8Array();
  if (request.headers.has("content-length")) return new Uint8Array(await request.arrayBuffer());
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    throw problem("body_not_utf8");
  }
}

/**
 * Deepest nesting of arrays and objects accepted in a JSON body. Free-form values (metadata, options,
 * client_metadata ...) are validated recursively, so unbounded depth would exhaust the stack (issue 6).
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether a JSON text nests arrays/objects deeper than `max`: one linear scan of the raw text (strings
 * skipped), before JSON.parse or any validator recurses into it.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Formats the first zod issue the way the reference platform words payload errors. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "Payload validation error";
  const where = issue.path.length ? ` on property ${issue.path.join(".")}` : "";
  if (issue.code === "unrecognized_keys") {
    return `Payload validation error: 'Additional properties not allowed: ${issue.keys.join(",")}'`;
  }
  return `Payload validation error: '${issue.message}'${where}`;
}

/**
 * Parses a management JSON body against a schema: non-JSON content type, malformed JSON, oversized bodies
 * and schema violations are all 400/413/415 with a clear message, before anything is written.
 */
export async function readJson<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const type = c.req.header("content-type") ?? "";
  const text = await readBodyText(c.req.raw, () => problem("payload_too_large", { bytes: MAX_BODY_BYTES }));
  if (text.trim() === "") throw problem("body_required");
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw problem("unsupported_media_type");
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw problem("body_too_deep", { depth: MAX_JSON_DEPTH });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw problem("body_not_json", { detail: (error as Error).message });
  }
  // Issue 25 finding 3: no management body may carry a prototype name as a key, at any depth; a validator
  // copying it into a fresh object would set that object's prototype (or drop the key silently).
  const reserved = reservedKeyIn(data);
  if (reserved) throw problem("invalid_body", { detail: `"${reserved}" is a reserved name and cannot be used as a property name` });
  const result = schema.safeParse(data);
  if (!result.success) throw problem("invalid_body", { detail: describeIssue(result.error) });
  return result.data;
}

/**
 * Reads an OAuth endpoint's parameters from a form or JSON body. Every value must be a single string
 * (RFC 6749 §3.2: parameters must not be repeated); errors are OAuth `invalid_request`.
 */
export async function readOAuthParams(request: Request): Promise<Record<string, string>> {
  const type = request.headers.get("content-type") ?? "";
  const text = await readBodyText(request, () => new OAuthError("invalid_request", "Request body is too large", 413));
  const params: Record<string, string> = {};
  if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
    for (const [key, value] of new URLSearchParams(text)) {
      if (key in params) throw new OAuthError("invalid_request", `Parameter "${key}" is repeated`);
      params[key] = value;
    }
    return params;
  }
  if (/^application\/(.+\+)?json\b/i.test(type)) {
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new OAuthError("invalid_request", "Request body is nested too deeply");
    let data: unknown;
    try {
      data = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      throw new OAuthError("invalid_request", "Request body is not valid JSON");
    }
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      throw new OAuthError("invalid_request", "Request body must be a JSON object");
    }
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined || value === null) continue;
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
        throw new OAuthError("invalid_request", `Parameter "${key}" must be a string`);
      }
      params[key] = String(value);
    }
    return params;
  }
  if (text.trim() === "") return params;
  throw new OAuthError("invalid_request", "Content-Type must be application/x-www-form-urlencoded or application/json");
}

/**
 * A body of the Authentication API's JSON-or-form endpoints (`/dbconnections/*`): JSON objects may nest
 * (user_metadata), forms carry flat fields only. Every failure is an OAuth `invalid_request`; prototype
 * names are refused as keys at any depth (issue 25 finding 3).
 */
export async function readAuthApiBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  let data: unknown;
  if (/^application\/(.+\+)?json\b/i.test(c.req.header("content-type") ?? "")) {
    const text = await readBodyText(c.req.raw, () => new OAuthError("invalid_request", "Request body is too large", 413));
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new OAuthError("invalid_request", "Request body is nested too deeply");
    try {
      data = JSON.parse(text);
    } catch {
      throw new OAuthError("invalid_request", "Request body is not valid JSON");
    }
  } else {
    data = await readOAuthParams(c.req.raw);
  }
  const reserved = reservedKeyIn(data);
  if (reserved) throw new OAuthError("invalid_request", `"${reserved}" is a reserved name and cannot be used as a property name`);
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new OAuthError("invalid_request", describeIssue(parsed.error));
  return parsed.data;
}
