import { z } from "zod";
import { httpUrlWithoutCredentials } from "./hooks";

/** Credentials go in httpAuthorization, sealed, never in the URL. */
const endpoint = httpUrlWithoutCredentials("httpEndpoint");

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A header value the stream sends (issue 25 point 9): a CR or LF would split the request (the runtime refuses
 * to send it, so the stream could never deliver), and no other control character belongs in one either.
 */
const headerValue = (field: string, max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !CONTROL.test(value), `${field} must not contain control characters (CR, LF, NUL, tab ...)`);

const header = z.strictObject({
  header: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "header names are letters, digits and dashes"),
  value: headerValue("httpCustomHeaders values", 4096),
});

/** The reference platform's category filters. */
export const LOG_STREAM_CATEGORIES = [
  "auth.login.fail", "auth.login.notification", "auth.login.success", "auth.logout.fail", "auth.logout.success",
  "auth.signup.fail", "auth.signup.success", "auth.silent_auth.fail", "auth.silent_auth.success",
  "auth.token_exchange.fail", "auth.token_exchange.success", "management.fail", "management.success",
  "scim.event", "system.notification", "user.fail", "user.notification", "user.success", "actions", "other",
] as const;

const filter = z.strictObject({ type: z.literal("category"), name: z.enum(LOG_STREAM_CATEGORIES) });

const sink = z.strictObject({
  httpEndpoint: endpoint,
  httpAuthorization: headerValue("httpAuthorization", 4096).optional(),
  httpContentType: headerValue("httpContentType", 256).optional(),
  httpContentFormat: z.enum(["JSONARRAY", "JSONLINES", "JSONOBJECT"]).optional(),
  httpCustomHeaders: z.array(header).max(20).optional(),
});

/** POST /api/v2/log-streams: the http type (other sink types are not offered). */
export const createLogStreamBody = z.strictObject({
  name: z.string().trim().min(1).max(128).optional(),
  type: z.literal("http", { message: 'type must be "http" (the only log stream type offered)' }),
  isPriority: z.boolean().optional(),
  filters: z.array(filter).max(50).optional(),
  sink,
  startFrom: z.iso.datetime({ offset: true }).optional(),
});

/** PATCH /api/v2/log-streams/{id}: name, status (active or paused; a suspended stream resumes with active), filters, sink fields. */
export const updateLogStreamBody = z
  .strictObject({
    name: z.string().trim().min(1).max(128).optional(),
    status: z.enum(["active", "paused"]).optional(),
    isPriority: z.boolean().optional(),
    filters: z.array(filter).max(50).optional(),
    sink: sink.partial().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "The body must change at least one field");

export type LogStreamSinkInput = z.infer<typeof sink>;

/** A log stream as the API shows it (the reference platform's http type); credentials never appear. */
export interface LogStreamRecord {
  id: string;
  name: string;
  type: "http";
  status: "active" | "paused" | "suspended";
  isPriority: boolean;
  filters: { type: "category"; name: string }[];
  sink: {
    httpEndpoint: string;
    httpContentType: string;
    httpContentFormat: "JSONARRAY" | "JSONLINES" | "JSONOBJECT";
    /** Header names only: values are credentials (sealed with the authorization header). */
    httpCustomHeaders?: { header: string }[];
  };
  /**
   * Gatehouse's addition: why deliveries fail, while they do (the reference platform's dashboard shows a
   * stream's health; the API had no field for it). Absent once a batch is delivered or the stream is resumed.
   */
  lastError?: { message: string; failingSince: string; attempts: number };
}

/** What the worker prepared for a stream: public sink fields, and the credentials sealed. */
export interface LogStreamInput {
  name: string;
  status: LogStreamRecord["status"];
  isPriority: boolean;
  filters: LogStreamRecord["filters"];
  sink: LogStreamRecord["sink"];
  /** `{ httpAuthorization?, httpCustomHeaders? }` sealed under log_stream_sink:<id>; null: none. */
  sink_enc: string | null;
}
