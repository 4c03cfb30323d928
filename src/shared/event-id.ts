/**
 * Time-ordered, unique event ids: `evt_` + 12 hex digits of milliseconds + 16 random hex digits. The outbox's
 * events and log rows carry them; a code shard names its redemptions' log events with them (issue 31).
 */
export function newEventId(now: number): string {
  const random = crypto.getRandomValues(new Uint8Array(8));
  return `evt_${now.toString(16).padStart(12, "0")}${[...random].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
