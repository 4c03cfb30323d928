import { describe, expect, it } from "vitest";
import { isEmailAddress } from "../../../src/shared/email-address";

describe("isEmailAddress (issue 25 point 10)", () => {
  it("accepts dot-atom addresses, internationalized ones included", () => {
    for (const good of ["a@b.co", "first.last+tag@example.com", "o'brien@example.ie", "x_y-z@sub.example-host.org", "user!#$%&*/=?^`{|}~@example.com", "jörg@bücher.example", "a@b.c"]) {
      expect(isEmailAddress(good), good).toBe(true);
    }
  });

  it("refuses markup, quotes, display names, control characters, domain literals and malformed dots", () => {
    const bad = [
      "x<script>alert(1)</script>@acme.test",
      "x<script>@acme.test",
      "a@acme.test>",
      '"quoted"@example.com',
      "Ann <ann@example.com>",
      "a b@example.com",
      "a\u0000b@example.com",
      "a\r\nb@example.com",
      "a\u007f@example.com",
      "a(comment)@example.com",
      "a\\b@example.com",
      "a@[127.0.0.1]",
      "a@localhost",
      ".a@example.com",
      "a.@example.com",
      "a..b@example.com",
      "a@example..com",
      "a@-example.com",
      "a@example.com.",
      "@example.com",
      "a@",
      "a@b@example.com",
      `${"a".repeat(65)}@example.com`,
      `a@${"b".repeat(250)}.com`,
    ];
    for (const value of bad) expect(isEmailAddress(value), JSON.stringify(value)).toBe(false);
  });
});
