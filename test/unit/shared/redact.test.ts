import { describe, expect, it } from "vitest";
import { backoffMs, BASE_BACKOFF_MS, MAX_BACKOFF_MS } from "../../../src/objects/tenant/core/relay";
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
