import type { MetricRecord, MetricsSink } from "./relay";

/** The slice of a Workers Analytics Engine dataset binding the sink uses. */
export interface MetricsDataset {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

/**
 * The relay's metrics sink (SPEC §6.3 `outbox.metrics`), chosen by OUTBOX_METRICS:
 * - `analytics`: one data point per record in the Workers Analytics Engine dataset bound as
 *   OUTBOX_METRICS_DATASET (blobs: tenant, event type, destination, metric; double: value; index: tenant),
 *   queried with the Analytics Engine SQL API in production. `wrangler dev` simulates the binding locally.
 * - `log`: one JSON line per record (`outbox_metric`) on the console: `wrangler dev`'s terminal locally,
 *   Workers Logs or Logpush in production. The development sink a person reads.
 * - unset or anything else: no records (the relay does not compute them).
 * A sink never throws into the relay: a failing write is reported on the console and dropped.
 */
export function metricsSinkFrom(vars: Record<string, unknown>): MetricsSink | undefined {
  const kind = vars.OUTBOX_METRICS;
  if (kind === "log") {
    return (record) => console.log(JSON.stringify({ outbox_metric: record }));
  }
  if (kind === "analytics") {
    const dataset = vars.OUTBOX_METRICS_DATASET as MetricsDataset | undefined;
    if (!dataset || typeof dataset.writeDataPoint !== "function") {
      console.warn("OUTBOX_METRICS=analytics needs an analytics_engine_datasets binding named OUTBOX_METRICS_DATASET; metrics are off");
      return undefined;
    }
    return (record) => {
      try {
        dataset.writeDataPoint(dataPoint(record));
      } catch (error) {
        console.warn(`outbox metric dropped: ${(error as Error).message}`);
      }
    };
  }
  return undefined;
}

/** How a record is laid out in the dataset (documented in docs/outbox-and-logs.md for queries). */
export function dataPoint(record: MetricRecord): { blobs: string[]; doubles: number[]; indexes: string[] } {
  return {
    blobs: [record.tenant_id, record.event_type, record.destination ?? "", record.metric],
    doubles: [record.value],
    indexes: [record.tenant_id.slice(0, 96)],
  };
}
