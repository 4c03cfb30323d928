// The console's action code editor (issue 30): progressive enhancement of `textarea[data-editor]`. Without
// this script the textarea is the editor; with it, CodeMirror 6 edits and the textarea, kept in step, is
// still what the form posts. Bundled by scripts/build-console-assets.mjs into public/admin/assets/.
import { javascript } from "@codemirror/lang-javascript";
import { EditorView, basicSetup } from "codemirror";

/** The page's CSP nonce, so CodeMirror's own style elements are admitted (EditorView.cspNonce). */
const nonce = document.querySelector("script[nonce]")?.nonce ?? "";

for (const textarea of document.querySelectorAll("textarea[data-editor]")) {
  const label = document.querySelector(`label[for="${textarea.id}"]`);
  const view = new EditorView({
    doc: textarea.value,
    extensions: [
      basicSetup,
      javascript(),
      EditorView.cspNonce.of(nonce),
      EditorView.contentAttributes.of({ "aria-label": label?.textContent ?? "Code" }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) textarea.value = update.state.doc.toString();
      }),
    ],
  });
  textarea.insertAdjacentElement("afterend", view.dom);
  textarea.hidden = true;
  textarea.form?.addEventListener("submit", () => {
    textarea.value = view.state.doc.toString();
  });
}
