import { describe, expect, it } from "vitest";
import { encryptionContext } from "../../../src/shared/crypto/contexts";

describe("encryption contexts (issue 7 point 5)", () => {
  // A changed context makes every stored ciphertext sealed under the old one unreadable: this pin must
  // only ever grow. Never edit an existing line to make it pass.
  it("keeps every context exactly as stored ciphertexts were sealed", () => {
    expect(encryptionContext.signingKey("kid-1")).toBe("signing_key:kid-1");
    expect(encryptionContext.clientSecret("abc")).toBe("client_secret:abc");
    expect(encryptionContext.connectionSecrets("con_1")).toBe("connection_secrets:con_1");
    expect(encryptionContext.resourceServerSigningSecret("rs_1")).toBe("resource_server_signing_secret:rs_1");
    expect(encryptionContext.actionSecrets("act_1")).toBe("action_secrets:act_1");
    expect(encryptionContext.logStreamSink("lst_1")).toBe("log_stream_sink:lst_1");
    expect(encryptionContext.totpSecret("totp|dev_1")).toBe("totp_secret:totp|dev_1");
    expect(encryptionContext.smsProvider("twilio")).toBe("guardian_sms_provider:twilio");
    expect(encryptionContext.emailProvider("tenant-1")).toBe("email_provider:tenant-1");
    expect(encryptionContext.deploySecret("acme", "ENCRYPTION_KEY")).toBe("tenant_deploy_secret:acme:ENCRYPTION_KEY");
    expect(encryptionContext.queuedEmailText("ann@example.com")).toBe("queued_email_text:ann@example.com");
    expect(encryptionContext.consoleSession("abc")).toBe("console_session:abc");
    expect(encryptionContext.consoleLogin()).toBe("console_login_transaction");
    expect(encryptionContext.consoleTryLogin("acme")).toBe("console_try_login:acme");
    expect(encryptionContext.settingsSecret("captcha", "recaptcha_v2.secret")).toBe("settings_secret:captcha:recaptcha_v2.secret");
    expect(Object.keys(encryptionContext).sort()).toEqual([
      "actionSecrets",
      "clientSecret",
      "connectionSecrets",
      "consoleLogin",
      "consoleSession",
      "consoleTryLogin",
      "deploySecret",
      "emailProvider",
      "logStreamSink",
      "queuedEmailText",
      "resourceServerSigningSecret",
      "settingsSecret",
      "signingKey",
      "smsProvider",
      "totpSecret",
    ]);
  });
});
