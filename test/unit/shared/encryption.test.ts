import { describe, expect, it } from "vitest";
import { EncryptionKeyError, fieldCipher } from "../../../src/shared/crypto/encryption";
import { timingSafeEqualText } from "../../../src/shared/crypto/compare";

const KEY = "unit-test-encryption-key-0123456789abcdef";

describe("encryption at rest", () => {
  it("round-trips and never stores plaintext", async () => {
    const cipher = await fieldCipher(KEY);
    const sealed = await cipher.encrypt("s3cret-value", "client_secret:abc");
    expect(sealed.startsWith("enc:v1:")).toBe(true);
    expect(sealed).not.toContain("s3cret-value");
    expect(await cipher.decrypt(sealed, "client_secret:abc")).toBe("s3cret-value");
  });

  it("a ciphertext does not open under another context or another key", async () => {
    const sealed = await (await fieldCipher(KEY)).encrypt("v", "client_secret:abc");
    await expect((await fieldCipher(KEY)).decrypt(sealed, "client_secret:other")).rejects.toThrow(EncryptionKeyError);
    await expect((await fieldCipher(`${KEY}-rotated`)).decrypt(sealed, "client_secret:abc")).rejects.toThrow(/ENCRYPTION_KEY/);
  });

  it("a missing or short ENCRYPTION_KEY is a clear error, not plaintext", () => {
    expect(() => fieldCipher(undefined)).toThrow(/ENCRYPTION_KEY is not configured/);
    expect(() => fieldCipher("short")).toThrow(/at least 32/);
  });

  it("compares secrets by value regardless of length", async () => {
    expect(await timingSafeEqualText("abc", "abc")).toBe(true);
    expect(await timingSafeEqualText("abc", "abd")).toBe(false);
    expect(await timingSafeEqualText("abc", "abcd")).toBe(false);
  });
});
