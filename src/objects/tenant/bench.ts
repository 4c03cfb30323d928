import type { Sql } from "../sql";
import { buildAuditEvent, SYSTEM_CONTEXT } from "./audit";
import { emitAudit } from "./events";
import { recordOutboxEvents } from "./outbox";
import type { Publisher } from "./publisher";

/**
 * Benchmark probes (`npm run bench`, reached only through /__bench when BENCH_ROUTES=1; never used by the
 * product). They run inside the tenant object so that figures measure the object, not HTTP.
 */

// workerd advances Date.now() only across I/O; yielding to a timer makes the reading current.
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Relay throughput: records `backlog` audit events (not timed), then times alarm runs until every one is
 * delivered to the logs destination.
 */
export async function benchRelay(publisher: Publisher, sql: Sql, storage: DurableObjectStorage, backlog: number) {
  const now = publisher.now();
  for (let done = 0; done < backlog; done += 1000) {
    const events = Array.from({ length: Math.min(1000, backlog - done) }, (_, i) => ({
      event_type: "bench.event",
      payload: buildAuditEvent({ event_type: "bench.event", log_type: "sapi", category: "system", description: `bench ${done + i}` }, SYSTEM_CONTEXT, now),
    }));
    storage.transactionSync(() => recordOutboxEvents(sql, events, now));
  }
  await tick();
  const started = Date.now();
  let passes = 0;
  while (publisher.pendingNow() > 0 && passes < 1000) {
    await publisher.alarm();
    passes++;
  }
  await tick();
  const ms = Date.now() - started;
  return { backlog, ms, passes, per_second: ms > 0 ? Math.round((backlog * 1000) / ms) : null };
}

/**
 * Cost of a configuration write with and without its outbox event: `n` commits of the same settings row,
 * once with an audit event per commit and once without, same transaction path otherwise.
 */
export async function benchCommit(publisher: Publisher, n: number) {
  const run = async (withEvent: boolean) => {
    await tick();
    const started = Date.now();
    for (let i = 0; i < n; i++) {
      publisher.commit((tx) => {
        tx.sql.run`INSERT INTO _settings (key, value) VALUES ('bench', ${String(i)}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
        if (withEvent) {
          emitAudit(tx, SYSTEM_CONTEXT, {
            event_type: "branding.updated",
            log_type: "sapi",
            category: "admin_action",
            description: "branding updated",
            target: { type: "branding", id: "branding", before: { logo_url: `https://example.com/${i - 1}.png` }, after: { logo_url: `https://example.com/${i}.png` } },
          });
        }
      });
    }
    await tick();
    return Date.now() - started;
  };
  await run(false);
  const bare = await run(false);
  const withOutbox = await run(true);
  return { n, bare_ms: bare, outbox_ms: withOutbox, ratio: bare > 0 ? withOutbox / bare : null };
}
