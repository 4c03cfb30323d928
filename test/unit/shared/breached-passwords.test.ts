import { describe, expect, it } from "vitest";
import { isBreachedPassword } from "../../../src/shared/breached-passwords/check";

describe("the bundled breached-password list", () => {
  it("finds common breached passwords, whatever their case", async () => {
    for (const p of ["123456", "password", "qwerty", "letmein", "Password", "DRAGON", "iloveyou", "trustno1"]) expect(await isBreachedPassword(p), p).toBe(true);
  });

  it("does not find passwords that are not on it", async () => {
    for (const p of ["correct horse battery staple 91", "p4ssw0rd!-x7Qz", "Gatehouse-2026-unique", crypto.randomUUID()]) expect(await isBreachedPassword(p), p).toBe(false);
  });
});
