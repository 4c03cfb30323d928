import { describe, expect, it } from "vitest";
import { describeError, ERRORS, type ErrorCode, fail, unwrap } from "../../../src/shared/errors";

const codes = Object.keys(ERRORS) as ErrorCode[];

describe("the error catalogue (issue 7 point 3)", () => {
  it("gives every code exactly one HTTP error status, one non-empty message and a wire errorCode", () => {
    for (const code of codes) {
      const entry = ERRORS[code];
      expect(Number.isInteger(entry.status) && entry.status >= 400 && entry.status < 600, code).toBe(true);
      expect(entry.message.trim(), code).not.toBe("");
      expect(entry.errorCode, code).toMatch(/^[a-z_]+$/);
    }
  });

  it("names each not-found failure after its resource, never the generic inexistent_resource", () => {
    for (const code of codes.filter((c) => ERRORS[c].status === 404)) {
      expect(ERRORS[code].errorCode, code).not.toBe("inexistent_resource");
    }
  });

  it("fills a message's placeholders from the failure's params", () => {
    expect(describeError({ code: "connection_conflict", params: { name: "db" } })).toEqual({
      status: 409,
      message: 'A connection with name "db" already exists',
      errorCode: "connection_conflict",
    });
  });

  it("turns an object's failure into the management error of its code", () => {
    expect(() => unwrap(fail("inexistent_client"))).toThrow(
      expect.objectContaining({ status: 404, message: "The client does not exist", errorCode: "inexistent_client" }),
    );
  });
});
