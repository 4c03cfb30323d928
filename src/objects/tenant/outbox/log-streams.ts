import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { type EgressPolicy, egressRefusal } from "../../../shared/egress-policy";
import { fail, ok, type Result } from "../../../shared/errors";
import type { LogRecord } from "../../../shared/types";
import type { LogStreamInput, LogStreamRecord } from "../../../shared/schemas/log-streams";
import { json, type Sql } from "../../sql";
import { getLog } from "../core/logs";
import { audited } from "../core/events";
import type { AlarmJob } from "../core/publisher";
import { TenantRpc } from "../core/rpc";

/**
 * Log streams (SPEC §2.10, issue 13 point 7): each stream reads the logs table after its own cursor and POSTs
 * batches to its endpoint; the cursor moves only after a 2xx, so delivery is at-least-once and in order. A
 * failing stream backs off on its own (other streams and the outbox are unaffected) and is `suspended` once
 * it has failed without a success for the configured period, or at once when its request cannot be sent as
 * configured (issue 25 point 9: a header the runtime refuses). The API shows the failure as `lastError`.
 */

type Row = Record<string, unknown>;

export const LOG_STREAM_BATCH = 100;
export const LOG_STREAM_TIMEOUT_MS = 10_000;
const BASE_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 300_000;

const toStream = (r: Row): LogStreamRecord => ({
  id: String(r.id),
  name: String(r.name),
  type: "http",
  status: r.status as LogStreamRecord["status"],
  isPriority: r.is_priority === 1,
  filters: json(r.filters as string, []),
  sink: json(r.sink as string, {} as LogStreamRecord["sink"]),
  ...(r.last_error != null && r.failing_since != null
    ? { lastError: { message: String(r.last_error), failingSince: new Date(Number(r.failing_since)).toISOString(), attempts: Number(r.attempts) } }
    : {}),
});

/** A delivery that cannot succeed as configured: retrying would fail the same way, so the stream is suspended at once. */
class Undeliverable extends Error {}

/** The request's headers, or Undeliverable naming the header (never its value: values are credentials). */
function streamHeaders(contentType: string, secret: { httpAuthorization?: string; httpCustomHeaders?: { header: string; value: string }[] }): Headers {
  const headers = new Headers();
  const set = (name: string, value: string) => {
    try {
      headers.set(name, value);
    } catch {
      throw new Undeliverable(`The ${name} header cannot be sent (a control character such as CR or LF in its value?): update the stream's sink`);
    }
  };
  set("content-type", contentType);
  for (const h of secret.httpCustomHeaders ?? []) set(h.header, h.value);
  if (secret.httpAuthorization) set("authorization", secret.httpAuthorization);
  return headers;
}

/** The archive pipeline of SPEC §6.3 (`outbox.pipeline`) is a stream row of its own, never listed. */
export const PIPELINE_STREAM_ID = "_pipeline";

export function getLogStream(sql: Sql, id: string): LogStreamRecord | null {
  if (id === PIPELINE_STREAM_ID) return null;
  const row = sql.first<Row>`SELECT * FROM log_streams WHERE id = ${id}`;
  return row ? toStream(row) : null;
}

export function listLogStreams(sql: Sql): LogStreamRecord[] {
  return sql.all<Row>`SELECT * FROM log_streams WHERE id <> ${PIPELINE_STREAM_ID} ORDER BY created_at, id`.map(toStream);
}

/** The sealed credentials of a stream (for a PATCH that keeps some of them). */
export function sealedSink(sql: Sql, id: string): string | null {
  return sql.first<{ sink_enc: string | null }>`SELECT sink_enc FROM log_streams WHERE id = ${id}`?.sink_enc ?? null;
}

/** A new stream starts after the newest log (or at `startFrom`): it streams what happens from now on. */
export function createLogStream(sql: Sql, id: string, input: LogStreamInput, startFrom: number | null, now: number): LogStreamRecord {
  const newest = sql.first<{ date: number; log_id: string }>`SELECT date, log_id FROM logs ORDER BY date DESC, log_id DESC LIMIT 1`;
  const cursor = startFrom !== null ? { date: startFrom - 1, log_id: "" } : (newest ?? { date: 0, log_id: "" });
  sql.run`INSERT INTO log_streams (id, name, type, status, sink, sink_enc, filters, is_priority, cursor_date, cursor_id, created_at, updated_at)
    VALUES (${id}, ${input.name}, 'http', ${input.status}, ${input.sink}, ${input.sink_enc}, ${input.filters}, ${input.isPriority},
      ${cursor.date}, ${cursor.log_id}, ${now}, ${now})`;
  return getLogStream(sql, id) as LogStreamRecord;
}

/** Replaces a stream's settings; turning it (back) to active clears its failure state and retries now. */
export function updateLogStream(sql: Sql, id: string, input: LogStreamInput, now: number): Result<{ before: LogStreamRecord; after: LogStreamRecord }> {
  const before = getLogStream(sql, id);
  if (!before) return fail("inexistent_log_stream");
  const reactivated = input.status === "active" && before.status !== "active";
  sql.run`UPDATE log_streams SET name = ${input.name}, status = ${input.status}, sink = ${input.sink}, sink_enc = ${input.sink_enc},
      filters = ${input.filters}, is_priority = ${input.isPriority}, updated_at = ${now} WHERE id = ${id}`;
  if (reactivated) sql.run`UPDATE log_streams SET failing_since = NULL, attempts = 0, next_attempt_at = NULL, last_error = NULL WHERE id = ${id}`;
  return ok({ before, after: getLogStream(sql, id) as LogStreamRecord });
}

export function deleteLogStream(sql: Sql, id: string): Result<LogStreamRecord> {
  const before = getLogStream(sql, id);
  if (!before) return fail("inexistent_log_stream");
  sql.run`DELETE FROM log_streams WHERE id = ${id}`;
  return ok(before);
}

/** The reference platform's category of a log type, for stream filters. */
export function categoryOf(type: string): string {
  const map: Record<string, string> = {
    s: "auth.login.success", f: "auth.login.fail", fp: "auth.login.fail", fu: "auth.login.fail", w: "auth.login.notification",
    ss: "auth.signup.success", fs: "auth.signup.fail", slo: "auth.logout.success", flo: "auth.logout.fail",
    seacft: "auth.token_exchange.success", seccft: "auth.token_exchange.success", feacft: "auth.token_exchange.fail",
    feccft: "auth.token_exchange.fail", sapi: "management.success", fapi: "management.fail",
  };
  return map[type] ?? "other";
}

/** One HTTP request per batch (JSONARRAY, JSONLINES) or per log (JSONOBJECT); each item `{ log_id, data }`. */
export function streamBodies(format: LogStreamRecord["sink"]["httpContentFormat"], logs: LogRecord[]): string[] {
  const items = logs.map((log) => ({ log_id: log.log_id, data: log }));
  if (format === "JSONOBJECT") return items.map((item) => JSON.stringify(item));
  if (format === "JSONLINES") return [items.map((item) => JSON.stringify(item)).join("\n")];
  return [JSON.stringify(items)];
}

interface StreamEnv {
  encryptionKey: string | undefined;
  /** SPEC §6.3 `outbox.pipeline`: its bearer token comes from the deployment, never from storage. */
  pipelineToken?: string | undefined;
  /** Where a tenant's stream may send (issue 25 point 8); the deployment's own pipeline is not checked. */
  egress: EgressPolicy;
  /** Continuous failure after which a stream is suspended. */
  suspendAfterMs: () => number;
}

async function deliverStream(sql: Sql, row: Row, env: StreamEnv, now: number): Promise<void> {
  const stream = toStream(row);
  const batch = sql.all<{ log_id: string; date: number; type: string }>`SELECT log_id, date, type FROM logs
    WHERE (date, log_id) > (${row.cursor_date as number}, ${row.cursor_id as string}) ORDER BY date, log_id LIMIT ${LOG_STREAM_BATCH}`;
  const last = batch[batch.length - 1];
  if (!last) return;
  const wanted = stream.filters.map((f) => f.name);
  const logs = batch.filter((l) => !wanted.length || wanted.includes(categoryOf(l.type))).map((l) => getLog(sql, l.log_id)).filter((l): l is LogRecord => l !== null);
  try {
    if (logs.length) {
      const secret = stream.id === PIPELINE_STREAM_ID
        ? { ...(env.pipelineToken ? { httpAuthorization: `Bearer ${env.pipelineToken}` } : {}) }
        : row.sink_enc
        ? (JSON.parse(await (await fieldCipher(env.encryptionKey)).decrypt(String(row.sink_enc), encryptionContext.logStreamSink(stream.id))) as {
            httpAuthorization?: string;
            httpCustomHeaders?: { header: string; value: string }[];
          })
        : {};
      const headers = streamHeaders(stream.sink.httpContentType, secret);
      const refused = stream.id === PIPELINE_STREAM_ID ? null : egressRefusal(stream.sink.httpEndpoint, env.egress);
      if (refused) throw new Undeliverable(`Refused by the egress policy: ${refused}`);
      for (const body of streamBodies(stream.sink.httpContentFormat, logs)) {
        const res = await fetch(stream.sink.httpEndpoint, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(LOG_STREAM_TIMEOUT_MS) });
        void res.body?.cancel();
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
      }
    }
    sql.run`UPDATE log_streams SET cursor_date = ${last.date}, cursor_id = ${last.log_id}, attempts = 0, failing_since = NULL,
        next_attempt_at = NULL, last_error = NULL WHERE id = ${stream.id}`;
  } catch (error) {
    const attempts = Number(row.attempts) + 1;
    const since = (row.failing_since as number | null) ?? now;
    // The deployment's pipeline is never suspended: it keeps retrying with backoff.
    const suspended = stream.id !== PIPELINE_STREAM_ID && (error instanceof Undeliverable || now - since >= env.suspendAfterMs());
    const wait = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempts - 1));
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    sql.run`UPDATE log_streams SET attempts = ${attempts}, failing_since = ${since}, next_attempt_at = ${now + wait}, last_error = ${message},
        status = ${suspended ? "suspended" : String(row.status)} WHERE id = ${stream.id}`;
  }
}

/**
 * Keeps the pipeline's stream row in step with the deployment (SPEC §6.3): configured, it exists (starting
 * after the newest log the first time) and points at the endpoint; unset, it is gone.
 */
export function syncPipeline(sql: Sql, pipeline: { endpoint: string } | undefined, now: number): void {
  if (!pipeline) {
    sql.run`DELETE FROM log_streams WHERE id = ${PIPELINE_STREAM_ID}`;
    return;
  }
  const sink = { httpEndpoint: pipeline.endpoint, httpContentType: "application/x-ndjson", httpContentFormat: "JSONLINES" };
  if (sql.first`SELECT 1 FROM log_streams WHERE id = ${PIPELINE_STREAM_ID}`) {
    sql.run`UPDATE log_streams SET sink = ${sink} WHERE id = ${PIPELINE_STREAM_ID}`;
    return;
  }
  const input: LogStreamInput = { name: "outbox pipeline", status: "active", isPriority: false, filters: [], sink: sink as LogStreamRecord["sink"], sink_enc: null };
  createLogStream(sql, PIPELINE_STREAM_ID, input, null, now);
}

/**
 * The alarm job of log streams: due when an active stream has logs past its cursor (at its backoff time
 * after a failure). Streams deliver independently, one batch each per pass.
 */
export function logStreamJob(sql: Sql, env: StreamEnv): AlarmJob {
  const active = () => sql.all<Row>`SELECT * FROM log_streams WHERE status = 'active'`;
  // One delivery per stream at a time: an alarm and a concurrent pass must not send the same batch twice.
  const inFlight = new Set<string>();
  const pending = (row: Row) => sql.first`SELECT 1 FROM logs WHERE (date, log_id) > (${row.cursor_date as number}, ${row.cursor_id as string}) LIMIT 1` !== undefined;
  return {
    name: "log_streams",
    readsNewLogs: () => sql.first`SELECT 1 FROM log_streams WHERE status = 'active' LIMIT 1` !== undefined,
    dueAt(now) {
      const times = active()
        .filter(pending)
        .map((row) => (row.next_attempt_at as number | null) ?? now);
      return times.length ? Math.min(...times) : null;
    },
    async run(now) {
      const due = active().filter((row) => !inFlight.has(String(row.id)) && ((row.next_attempt_at as number | null) ?? 0) <= now && pending(row));
      await Promise.all(
        due.map(async (row) => {
          inFlight.add(String(row.id));
          try {
            await deliverStream(sql, row, env, now);
          } finally {
            inFlight.delete(String(row.id));
          }
        }),
      );
      return due.length;
    },
  };
}

/** The log-streams facade (`stub.logStreams(audit)`). */
export class LogStreamsRpc extends TenantRpc {
  list(): LogStreamRecord[] {
    return this.read((sql) => listLogStreams(sql));
  }

  get(id: string): LogStreamRecord | null {
    return this.read((sql) => getLogStream(sql, id));
  }

  sealed(id: string): string | null {
    return this.read((sql) => sealedSink(sql, id));
  }

  create(id: string, input: LogStreamInput, startFrom: number | null): LogStreamRecord {
    return this.commit((tx) => {
      const created = createLogStream(tx.sql, id, input, startFrom, tx.now);
      audited(tx, this.audit, ok(created), { entity: "log_stream", action: "created", id, after: (s) => s });
      return created;
    });
  }

  update(id: string, input: LogStreamInput): Result<LogStreamRecord> {
    return this.commit((tx) => {
      const result = updateLogStream(tx.sql, id, input, tx.now);
      const before = result.ok ? result.value.before : undefined;
      return audited(tx, this.audit, result.ok ? ok(result.value.after) : result, { entity: "log_stream", action: "updated", id, before, after: (s) => s });
    });
  }

  delete(id: string): Result<LogStreamRecord> {
    return this.commit((tx) => {
      const result = deleteLogStream(tx.sql, id);
      return audited(tx, this.audit, result, { entity: "log_stream", action: "deleted", id, before: result.ok ? result.value : undefined });
    });
  }
}
