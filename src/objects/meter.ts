import { AsyncLocalStorage } from "node:async_hooks";
import { RpcTarget } from "cloudflare:workers";

/**
 * Object work meter (issue 31), for bench and test builds only: installed by an object's constructor when
 * `OBJECT_METER=1`, so a deployment without the flag pays one comparison per object start and nothing per
 * request. It counts, per object instance:
 * - `round_trips`: RPC calls that enter the object from outside (a facade call pipelined on a top-level call,
 *   `stub.users(audit).create(x)`, rides the same round trip: `calls` counts both); the object's own methods
 *   its alarm calls are not (`inAlarm`);
 * - `transactions`: outermost `transactionSync` runs inside a request, `background_transactions` the others
 *   (the alarm: outbox relay, retention, cleanup);
 * - `writes`: INSERT / UPDATE / DELETE / REPLACE statements run by the requests, `background_writes` the others
 *   (the alarm's: whether the relay runs inside a window depends on timing, so it is counted apart).
 * While recording it also keeps every external call (its facade chain and arguments) so that `replay` can run
 * the same object-side work again, each call in a loop of transactions rolled back, and time it inside the
 * object (the front worker's CPU is not counted).
 */
export interface MeterCounts {
  round_trips: number;
  calls: number;
  transactions: number;
  background_transactions: number;
  writes: number;
  background_writes: number;
}

interface Step {
  method: string;
  args: unknown[];
}

interface Meter {
  counts: MeterCounts;
  /** >0 while an external call's synchronous part runs (nested calls are the object's own). */
  depth: number;
  txDepth: number;
  replaying: boolean;
  /** Inside a replay's pass: a call's own transaction runs in the pass's, without a savepoint of its own. */
  flat: boolean;
  /** A flattened transaction threw (its writes could not be undone alone): the replay is refused. */
  flatFailed: boolean;
  recording: Step[][] | null;
  last: Step[][];
}

const METER = Symbol("meter");
const LINK = Symbol("meterLink");
const wrapped = new WeakSet<object>();
/** Every metered object of this isolate by name ("tenant:<id>", "user:<tenant>/<user>"). */
const meters = new Map<string, Meter>();

/** The open windows' name filters (meterStart adds, meterStop removes: the same function). */
const windows = new Set<(name: string) => boolean>();

/**
 * Set while an object's alarm runs, across its awaits: the object's own methods it calls (a code shard's
 * `flushLogs`) are its background work, not calls entering from outside, however the alarm and a request
 * interleave.
 */
const inAlarm = new AsyncLocalStorage<true>();

const zero = (): MeterCounts => ({ round_trips: 0, calls: 0, transactions: 0, background_transactions: 0, writes: 0, background_writes: 0 });

/**
 * Whether this deployment meters the objects of a tenant: OBJECT_METER=1 (the bench) meters every tenant's,
 * a comma-separated list of tenant id prefixes (the tests: "meter-") only theirs.
 */
export function meterEnabled(env: unknown, tenantId: string): boolean {
  const setting = (env as { OBJECT_METER?: string }).OBJECT_METER;
  if (!setting) return false;
  return setting === "1" || setting.split(",").some((prefix) => prefix && tenantId.startsWith(prefix));
}

const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/**
 * Meters one object instance: wraps its class's RPC methods (once per isolate; `bench*`, `alarm`, `fetch`
 * and the constructor excluded), its storage's `transactionSync` and its SQL `exec`.
 */
export function installMeter(instance: object, storage: DurableObjectStorage, sql: SqlStorage, name: string): void {
  // An object started while a window that covers it is open (a code shard's first redemption) records too.
  const recording = [...windows].some((which) => which(name)) ? [] : null;
  const meter: Meter = { counts: zero(), depth: 0, txDepth: 0, replaying: false, flat: false, flatFailed: false, recording, last: [] };
  meters.set(name, meter);
  (instance as Record<symbol, Meter>)[METER] = meter;
  wrapPrototype(Object.getPrototypeOf(instance), (self) => (self as Record<symbol, Meter>)[METER], true);
  const transactionSync = storage.transactionSync.bind(storage);
  storage.transactionSync = <T>(fn: () => T): T => {
    if (meter.txDepth === 0 && !meter.replaying) meter.depth > 0 ? meter.counts.transactions++ : meter.counts.background_transactions++;
    meter.txDepth++;
    try {
      // In a replay's pass (depth 1), the call's own transaction (depth 2) runs as the pass's; deeper ones nest.
      if (!meter.flat || meter.txDepth !== 2) return transactionSync(fn);
      try {
        return fn();
      } catch (error) {
        meter.flatFailed = true;
        throw error;
      }
    } finally {
      meter.txDepth--;
    }
  };
  const exec = sql.exec.bind(sql);
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    if (!meter.replaying && WRITE.test(query)) meter.depth > 0 ? meter.counts.writes++ : meter.counts.background_writes++;
    return exec(query, ...bindings);
  }) as SqlStorage["exec"];
}

type Resolve = (self: object) => { meter: Meter; path: Step[] } | Meter | undefined;

function wrapPrototype(proto: object, find: Resolve, topLevel: boolean): void {
  if (wrapped.has(proto)) return;
  wrapped.add(proto);
  const seen = new Set<string>();
  for (let p = proto; p && p !== RpcTarget.prototype && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (seen.has(name) || name === "constructor" || name === "fetch" || name.startsWith("bench")) continue;
      seen.add(name);
      const descriptor = Object.getOwnPropertyDescriptor(p, name);
      if (!descriptor || typeof descriptor.value !== "function") continue;
      const original = descriptor.value as (...args: unknown[]) => unknown;
      if (name === "alarm") {
        if (topLevel) Object.defineProperty(proto, name, { ...descriptor, value: function alarm(this: object, ...args: unknown[]) { return inAlarm.run(true, () => original.apply(this, args)); } });
        continue;
      }
      Object.defineProperty(proto, name, {
        ...descriptor,
        value: function metered(this: object, ...args: unknown[]) {
          const found = find(this);
          const meter = found && "meter" in found ? found.meter : (found as Meter | undefined);
          if (!meter || meter.depth > 0 || meter.replaying || inAlarm.getStore()) return original.apply(this, args);
          const path = [...(found && "path" in found ? found.path : []), { method: name, args }];
          if (topLevel) meter.counts.round_trips++;
          meter.counts.calls++;
          meter.depth++;
          let result: unknown;
          try {
            result = original.apply(this, args);
          } finally {
            meter.depth--;
          }
          if (result instanceof RpcTarget) {
            (result as unknown as Record<symbol, unknown>)[LINK] = { meter, path };
            wrapPrototype(Object.getPrototypeOf(result), (self) => (self as Record<symbol, { meter: Meter; path: Step[] }>)[LINK], false);
          } else {
            meter.recording?.push(path);
          }
          return result;
        },
      });
    }
  }
}

/** Starts a window: zeroes the counts of the objects whose names `which` accepts, and records their calls. */
export function meterStart(which: (name: string) => boolean): void {
  windows.add(which);
  for (const [name, meter] of meters) {
    if (!which(name)) continue;
    meter.counts = zero();
    meter.recording = [];
  }
}

/**
 * Pauses (or resumes) a window: while paused nothing is counted or recorded (the bench reads a development
 * message between two metered requests of one class).
 */
export function meterPause(which: (name: string) => boolean, paused: boolean): void {
  for (const [name, meter] of meters) if (which(name) && meter.recording) meter.replaying = paused;
}

/** Ends a window: the summed counts of the objects `which` accepts, how many of them worked, their calls. */
export function meterStop(which: (name: string) => boolean): MeterCounts & { objects: number; recorded: string[] } {
  windows.delete(which);
  const total = { ...zero(), objects: 0, recorded: [] as string[] };
  for (const [name, meter] of meters) {
    if (!which(name)) continue;
    if (meter.recording) meter.last = meter.recording;
    total.recorded.push(...meter.last.map((path) => path.map((step) => step.method).join(".")));
    meter.recording = null;
    const busy = meter.counts.calls + meter.counts.transactions + meter.counts.background_transactions > 0;
    if (busy) total.objects++;
    for (const key of Object.keys(meter.counts) as (keyof MeterCounts)[]) total[key] += meter.counts[key];
  }
  return total;
}

/** The external calls of an object's last window (each a facade chain with its arguments). */
export type RecordedCalls = Step[][];

/** The calls the object's last window recorded (empty without a meter). */
export function meterLast(instance: object): RecordedCalls {
  return (instance as Record<symbol, Meter>)[METER]?.last ?? [];
}

class Rollback extends Error {}
/** Loops per replayed call (and per empty transaction), of which the median counts. */
const REPLAY_ROUNDS = 3;
const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Runs recorded calls again and answers the object time each one costs, in µs: each call alone, `n` times or
 * more (the median of {@link REPLAY_ROUNDS} loops), in a transaction rolled back (single-use artifacts are
 * consumed again each pass, on the same path), on the state its predecessors left (the copy of the window's start with the calls before it committed, as in
 * production each call is a request and a transaction of its own), less an empty rolled-back transaction's.
 * The call's own transaction is the pass's: production runs it outermost, with no savepoint under it (nested,
 * SQLite journals every page it writes, and past 64 KiB spills that journal to a temporary file). `settle` runs
 * after each call is committed (the tenant drops its outbox rows: no relay in a scratch object). Refuses a window
 * whose calls answer promises (their work after the first await would escape the rollback).
 */
export async function meterReplay(
  instance: object,
  storage: DurableObjectStorage,
  calls: RecordedCalls,
  n: number,
  settle: () => void = () => {},
): Promise<{ us: number; per_call_us: number[]; calls: number; n: number; ms: number } | { error: string }> {
  const meter = (instance as Record<symbol, Meter>)[METER];
  if (!meter) return { error: "OBJECT_METER is not set" };
  const run = (path: Step[]) => {
    let target: unknown = instance;
    for (const step of path) {
      const method = (target as Record<string, ((...a: unknown[]) => unknown) | undefined>)[step.method];
      if (!method) throw new Error(`no method ${step.method}`);
      target = method.apply(target, step.args);
    }
    if (target instanceof Promise) throw new Error(`${path.map((s) => s.method).join(".")} answers a promise`);
  };
  // One pass: `call` (or nothing) in a transaction rolled back.
  const pass = (call: Step[] | null) => {
    meter.flat = true;
    try {
      storage.transactionSync(() => {
        if (call) run(call);
        throw new Rollback();
      });
    } catch (error) {
      if (!(error instanceof Rollback) && (error as Error)?.constructor?.name !== "Rollback") throw error;
    } finally {
      meter.flat = false;
    }
    if (meter.flatFailed) throw new Error("a call's transaction failed and the call went on: the replay cannot undo it alone");
  };
  const time = async (call: Step[] | null, count: number) => {
    await tick();
    const started = Date.now();
    for (let i = 0; i < count; i++) pass(call);
    await tick();
    return Date.now() - started;
  };
  meter.replaying = true;
  meter.flatFailed = false;
  try {
    const per_call_us: number[] = [];
    let us = 0;
    let passes = 0;
    let total = 0;
    for (const call of calls) {
      pass(call);
      let count = n;
      let ms = await time(call, count);
      // Enough passes for a reading well above the clock's 1 ms step.
      while (ms < 100 && count < 200_000) {
        count *= 4;
        ms = await time(call, count);
      }
      // The median of three loops, the call's and the empty transaction's in turns (stop 33): a single reading
      // moved with the machine's other work (a call by up to 2x between runs); the median keeps what the call
      // itself causes in a typical loop (its collections included) and drops one loop that ran slow or fast.
      const calls = [ms];
      const bases: number[] = [];
      for (let round = 0; round < REPLAY_ROUNDS; round++) {
        if (round > 0) calls.push(await time(call, count));
        bases.push(await time(null, count));
      }
      const callUs = ((middle(calls) - middle(bases)) * 1000) / count;
      per_call_us.push(Math.round(callUs));
      us += callUs;
      passes += count;
      total += ms;
      // The next call runs on the state this one commits.
      run(call);
      settle();
    }
    // Each call's reading is unclamped (noise either way), the sum is not below 0.
    return { us: Math.max(0, us), per_call_us, calls: calls.length, n: passes, ms: total };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    meter.replaying = false;
  }
}
