import { describe, expect, it } from "vitest";
import { backoffMs, BASE_BACKOFF_MS, MAX_BACKOFF_MS } from "../../../src/objects/tenant/relay";
import { parseLogQuery } from "../../../src/shared/lucene/log-query";
import { isSensitiveKey, REDACTED, redact } from "../../../src/shared/redact";

describe("redact (SPEC §2.10)", () => {
  it("replaces credentials at any depth, in objects, arrays and name/value header lists", () => {
    const input = {
      password: "a",
      profile: { nested: [{ client_secret: "b", deeper: { "X-API-Key": "c", Authorization: "d" } }] },
      headers: [{ name: "authorization", value: "e" }, { key: "Accept", value: "application/json" }],
      access_token: "f",
      password_hash: "g",
      secrets_enc: "h",
      token_lifetime: 3600,
      token_endpoint_auth_method: "client_secret_post",
    };
    expect(redact(input)).toEqual({
      password: REDACTED,
      profile: { nested: [{ client_secret: REDACTED, deeper: { "X-API-Key": REDACTED, Authorization: REDACTED } }] },
      headers: [{ name: "authorization", value: REDACTED }, { key: "Accept", value: "application/json" }],
      access_token: REDACTED,
      password_hash: REDACTED,
      secrets_enc: REDACTED,
      token_lifetime: 3600,
      token_endpoint_auth_method: "client_secret_post",
    });
  });

  it("knows configuration from credentials", () => {
    for (const key of ["apiKey", "api_key", "refresh_token", "Cookie", "privateKey", "credentials"]) expect(isSensitiveKey(key), key).toBe(true);
    for (const key of ["token_lifetime", "name", "scope", "reference"]) expect(isSensitiveKey(key), key).toBe(false);
  });
});

describe("backoff", () => {
  it("doubles per attempt, jitters between half and all of it, and is capped", () => {
    expect(backoffMs(1, () => 0)).toBe(BASE_BACKOFF_MS / 2);
    expect(backoffMs(1, () => 1)).toBe(BASE_BACKOFF_MS);
    expect(backoffMs(3, () => 0.5)).toBe(BASE_BACKOFF_MS * 3);
    expect(backoffMs(40, () => 1)).toBe(MAX_BACKOFF_MS);
  });
});

describe("parseLogQuery", () => {
  it("reads type, type lists, ids and date ranges joined by AND or spaces", () => {
    expect(parseLogQuery('type:(fp OR fu) AND user_id:"auth0|a b" client_id:abc date:[2026-01-01 TO 2026-01-31]')).toEqual({
      type: ["fp", "fu"],
      user_id: "auth0|a b",
      client_id: "abc",
      from_date: Date.parse("2026-01-01"),
      to_date: Date.parse("2026-01-31") + 86_399_999,
    });
    expect(parseLogQuery(undefined)).toEqual({});
  });

  it("refuses what it does not support with a 400", () => {
    for (const q of ["description:x", "type:", "type:BAD!", "date:2026", "user_id:(a OR b)", "free text"]) {
      expect(() => parseLogQuery(q), q).toThrow(expect.objectContaining({ status: 400 }));
    }
  });
});
