import { describe, expect, it } from "vitest";
import { defineMigrations } from "../../../src/objects/sql";
import { platformMigrations } from "../../../src/objects/platform/migrations";
import { tenantMigrations } from "../../../src/objects/tenant/core/migrations";
import { userMigrations } from "../../../src/objects/user/migrations";

describe("migration lists", () => {
  it("accept a contiguous NNNN_slug list", () => {
    expect(defineMigrations("x", [{ name: "0001_a", sql: "SELECT 1" }, { name: "0002_b", sql: "SELECT 2" }])).toHaveLength(2);
  });

  it("fail loudly at load time on a gap, a duplicate, a bad name or an empty file", () => {
    expect(() => defineMigrations("x", [{ name: "0002_a", sql: "SELECT 1" }])).toThrow(/out of sequence/);
    expect(() => defineMigrations("x", [{ name: "0001_a", sql: "x" }, { name: "0001_b", sql: "y" }])).toThrow(/out of sequence/);
    expect(() => defineMigrations("x", [{ name: "1_a", sql: "SELECT 1" }])).toThrow(/NNNN_slug/);
    expect(() => defineMigrations("x", [{ name: "0001_a", sql: "  " }])).toThrow(/empty/);
  });

  it("every .sql file under migrations/ is listed, in order, for its object", () => {
    const files = Object.keys(import.meta.glob("../../../migrations/**/*.sql"));
    const onDisk = (object: string) =>
      files
        .filter((f) => f.includes(`/migrations/${object}/`))
        .map((f) => f.split("/").pop()?.replace(/\.sql$/, ""))
        .sort();
    expect(platformMigrations.map((m) => m.name)).toEqual(onDisk("platform"));
    expect(tenantMigrations.map((m) => m.name)).toEqual(onDisk("tenant"));
    expect(userMigrations.map((m) => m.name)).toEqual(onDisk("user"));
  });
});
