/**
 * Exclusive XML Canonicalization 1.0 without comments (https://www.w3.org/TR/xml-exc-c14n/), for the trees
 * of ./tree.ts. Gatehouse signs only documents it builds itself, so this covers what those contain: elements,
 * attributes, namespace declarations and text (no comments, processing instructions or DTD, which the
 * builders never emit and the parser refuses).
 *
 * Per exc-c14n §3, a namespace declaration is output on an element only when the element's own name or one
 * of its attributes uses its prefix ("visibly utilizes" it) and the nearest output ancestor did not already
 * output the same prefix with the same URI. Declarations are output sorted by prefix, default first, then
 * attributes sorted by namespace URI and local name (C14N 1.0 §2.2); empty elements get a start and an end tag.
 */
import {
  EMPTY_SCOPE,
  escapeAttribute,
  escapeText,
  localOf,
  namespaceOf,
  plainAttributes,
  prefixOf,
  type Scope,
  scopeOf,
  type XmlElement,
  type XmlNode,
} from "./tree";

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function canonical(node: XmlNode, scope: Scope, rendered: Scope, out: string[], inclusive: readonly string[]): void {
  if (typeof node === "string") {
    out.push(escapeText(node));
    return;
  }
  const inner = scopeOf(node, scope);
  const attrs = plainAttributes(node);
  const utilized = new Set([prefixOf(node.name), ...attrs.map(([name]) => prefixOf(name)).filter((p) => p !== "")]);
  // InclusiveNamespaces PrefixList (exc-c14n §3): those prefixes are output wherever they are in scope, as
  // inclusive C14N does, visibly utilized or not (still only when the output ancestor did not already).
  for (const prefix of inclusive) if (inner.has(prefix)) utilized.add(prefix);
  utilized.delete("xml");
  const declarations: [string, string][] = [];
  const nextRendered = new Map(rendered);
  for (const prefix of utilized) {
    const uri = inner.get(prefix) ?? "";
    if ((rendered.get(prefix) ?? "") === uri) continue;
    declarations.push([prefix, uri]);
    nextRendered.set(prefix, uri);
  }
  declarations.sort((a, b) => compare(a[0], b[0]));
  const sortedAttrs = attrs
    .map(([name, value]) => ({ name, value, ns: namespaceOf(name, inner, true), local: localOf(name) }))
    .sort((a, b) => compare(a.ns, b.ns) || compare(a.local, b.local));
  out.push(`<${node.name}`);
  for (const [prefix, uri] of declarations) out.push(prefix === "" ? ` xmlns="${escapeAttribute(uri)}"` : ` xmlns:${prefix}="${escapeAttribute(uri)}"`);
  for (const a of sortedAttrs) out.push(` ${a.name}="${escapeAttribute(a.value)}"`);
  out.push(">");
  for (const child of node.children) canonical(child, inner, nextRendered, out, inclusive);
  out.push(`</${node.name}>`);
}

/**
 * The exclusive canonical form of an element as a document subset apex: `scope` holds the namespaces its
 * ancestors declare (only those it visibly utilizes are output, and those of `inclusivePrefixes`, the
 * signature's InclusiveNamespaces PrefixList, where `#default` names the default namespace).
 */
export function excC14n(element: XmlElement, scope: Scope = EMPTY_SCOPE, inclusivePrefixes: readonly string[] = []): string {
  const out: string[] = [];
  canonical(element, scope, new Map(), out, inclusivePrefixes.map((p) => (p === "#default" ? "" : p)));
  return out.join("");
}
