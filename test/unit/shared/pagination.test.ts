import { describe, expect, it } from "vitest";
import { ManagementError } from "../../../src/shared/errors";
import { decodeCursor, encodeCursor } from "../../../src/shared/pagination/cursor";
import { checkpointPage, offsetPage, parseListQuery } from "../../../src/shared/pagination/list-query";

describe("pagination (SPEC §4.3)", () => {
  it("defaults to offset mode, page 0, per_page 50, bare array", () => {
    const q = parseListQuery({}, { checkpoint: true });
    expect(q).toMatchObject({ mode: "offset", page: 0, perPage: 50, includeTotals: false });
    expect(offsetPage("items", [1, 2], q as never, 2)).toEqual([1, 2]);
  });

  it("include_totals gives the {start, limit, length, total, items} envelope", () => {
    const q = parseListQuery({ page: "2", per_page: "10", include_totals: "true" }, { checkpoint: true });
    expect(offsetPage("users", [1], q as never, 21)).toEqual({ start: 20, limit: 10, length: 1, total: 21, users: [1] });
  });

  it("from or take switches to checkpoint mode and next is absent on the last page", () => {
    const q = parseListQuery({ take: "2", page: "5" }, { checkpoint: true });
    expect(q.mode).toBe("checkpoint");
    const more = checkpointPage("clients", [{ id: "a" }, { id: "b" }, { id: "c" }], q as never, (x) => ({ key: 1, id: x.id }));
    expect(more.clients).toHaveLength(2);
    expect(typeof more.next).toBe("string");
    const last = checkpointPage("clients", [{ id: "a" }], q as never, (x) => ({ key: 1, id: x.id }));
    expect(last).toEqual({ clients: [{ id: "a" }] });
  });

  it("endpoints without checkpoint support ignore from/take", () => {
    expect(parseListQuery({ take: "2" }, { checkpoint: false }).mode).toBe("offset");
  });

  it("a cursor is bound to its sort: replaying under another sort or a malformed cursor is 400", () => {
    const cursor = encodeCursor("created_at:-1", { key: 5, id: "x" });
    expect(decodeCursor(cursor, "created_at:-1")).toEqual({ key: 5, id: "x" });
    expect(() => decodeCursor(cursor, "created_at:1")).toThrow(ManagementError);
    expect(() => decodeCursor("not-a-cursor!", "created_at:-1")).toThrow(/Invalid checkpoint cursor/);
    expect(() => decodeCursor(btoa('{"v":2}'), "created_at:-1")).toThrow(/Invalid checkpoint cursor/);
  });

  it("rejects bad numbers, per_page over the max and unsupported sorts with 400", () => {
    for (const query of [{ page: "-1" }, { per_page: "101" }, { per_page: "abc" }, { include_totals: "yes" }, { sort: "name:1" }]) {
      expect(() => parseListQuery(query, { checkpoint: true }), JSON.stringify(query)).toThrow(ManagementError);
    }
  });
});
