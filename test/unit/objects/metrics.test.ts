import { afterEach, describe, expect, it, vi } from "vitest";
import { dataPoint, metricsSinkFrom } from "../../../src/objects/tenant/core/metrics";
import type { MetricRecord } from "../../../src/objects/tenant/core/relay";

const record: MetricRecord = { tenant_id: "acme", event_type: "hook.post-user-login", destination: "webhook", metric: "backoff_ms", value: 1500 };

afterEach(() => vi.restoreAllMocks());

describe("outbox metrics sink (SPEC §6.3 outbox.metrics)", () => {
  it("is off unless OUTBOX_METRICS names a sink", () => {
    expect(metricsSinkFrom({})).toBeUndefined();
    expect(metricsSinkFrom({ OUTBOX_METRICS: "statsd" })).toBeUndefined();
  });

  it("analytics writes one data point per record: tenant, event type, destination, metric as blobs, the value as a double", () => {
    const points: unknown[] = [];
    const sink = metricsSinkFrom({ OUTBOX_METRICS: "analytics", OUTBOX_METRICS_DATASET: { writeDataPoint: (p: unknown) => points.push(p) } });
    sink?.(record);
    sink?.({ ...record, destination: null, metric: "processed", value: 1 });
    expect(points).toEqual([
      { blobs: ["acme", "hook.post-user-login", "webhook", "backoff_ms"], doubles: [1500], indexes: ["acme"] },
      { blobs: ["acme", "hook.post-user-login", "", "processed"], doubles: [1], indexes: ["acme"] },
    ]);
  });

  it("analytics without the binding is off (with a warning), and a failing dataset never throws into the relay", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(metricsSinkFrom({ OUTBOX_METRICS: "analytics" })).toBeUndefined();
    const sink = metricsSinkFrom({ OUTBOX_METRICS: "analytics", OUTBOX_METRICS_DATASET: { writeDataPoint: () => { throw new Error("quota"); } } });
    expect(() => sink?.(record)).not.toThrow();
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining("OUTBOX_METRICS_DATASET"), "outbox metric dropped: quota"]);
  });

  it("log prints one JSON line per record for a person to read", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    metricsSinkFrom({ OUTBOX_METRICS: "log" })?.(record);
    expect(log).toHaveBeenCalledWith(JSON.stringify({ outbox_metric: record }));
  });

  it("keeps the index within Analytics Engine's 96-byte limit", () => {
    expect(dataPoint({ ...record, tenant_id: "t".repeat(200) }).indexes[0]).toHaveLength(96);
  });
});

describe("the dataset binding under workerd", () => {
  it("is bound as OUTBOX_METRICS_DATASET and accepts the sink's data points", async () => {
    const { env } = await import("cloudflare:workers");
    const sink = metricsSinkFrom({ OUTBOX_METRICS: "analytics", OUTBOX_METRICS_DATASET: env.OUTBOX_METRICS_DATASET });
    expect(sink).toBeTypeOf("function");
    expect(() => sink?.(record)).not.toThrow();
  });
});
