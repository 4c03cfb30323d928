import webauthnBrowser from "../../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js";
import type { AppContext } from "../context";

/**
 * Static scripts of the login pages, served from the worker (no CDN; the pages' CSP allows only scripts
 * carrying their nonce): the @simplewebauthn/browser bundle and the small ceremony script below.
 */

/**
 * Drives one WebAuthn ceremony from data in the page: reads the options (a JSON data block), runs it when the
 * person presses the button (or, for `autofill`, as soon as the page loads: conditional UI), puts the
 * browser's answer in the form and submits it. Status messages go to a live region.
 */
const CEREMONY = `(function () {
  "use strict";
  var W = window.SimpleWebAuthnBrowser;
  var data = document.getElementById("webauthn-options");
  var form = document.getElementById("webauthn-form");
  if (!W || !data || !form) return;
  var options = JSON.parse(data.textContent);
  var field = document.getElementById("webauthn-response");
  var status = document.getElementById("webauthn-status");
  var button = document.getElementById("webauthn-start");
  var mode = form.getAttribute("data-mode");
  function say(text) { if (status) { status.textContent = text; status.hidden = false; } }
  function fail(error) {
    if (error && error.name === "AbortError") return;
    say(error && error.name === "NotAllowedError" ? "The request was cancelled or timed out. Try again." : "That did not work" + (error && error.message ? ": " + error.message : "."));
    if (button) button.disabled = false;
  }
  function done(response) { field.value = JSON.stringify(response); form.submit(); }
  if (!W.browserSupportsWebAuthn()) {
    if (button) button.disabled = true;
    say("This browser does not support security keys or passkeys.");
    return;
  }
  function run() {
    if (button) button.disabled = true;
    say(mode === "register" ? "Follow your browser's prompt to create the credential." : "Follow your browser's prompt to verify.");
    var ceremony = mode === "register" ? W.startRegistration({ optionsJSON: options }) : W.startAuthentication({ optionsJSON: options });
    ceremony.then(done, fail);
  }
  if (button) button.addEventListener("click", run);
  if (mode === "autofill") {
    W.browserSupportsWebAuthnAutofill().then(function (yes) {
      if (yes) W.startAuthentication({ optionsJSON: options, useBrowserAutofill: true }).then(done, fail);
    });
  }
})();
`;

const script = (c: AppContext, body: string) =>
  c.body(body, 200, {
    "Content-Type": "text/javascript; charset=utf-8",
    "Cache-Control": "public, max-age=3600",
    "X-Content-Type-Options": "nosniff",
  });

/** GET /u2/assets/webauthn-browser.js */
export const webauthnBrowserScript = (c: AppContext) => script(c, webauthnBrowser);
/** GET /u2/assets/webauthn-ceremony.js */
export const webauthnCeremonyScript = (c: AppContext) => script(c, CEREMONY);
