/**
 * A minimal XML tree for the documents Gatehouse writes (SAML responses, metadata) and the small ones it
 * reads (AuthnRequest). Names are kept as written (`saml:Assertion`); namespace declarations are ordinary
 * attributes (`xmlns:saml`), resolved on demand. Text is stored unescaped.
 */

export interface XmlElement {
  /** Qualified name as written: `prefix:local` or `local`. */
  name: string;
  /** Attributes as written, namespace declarations included, in document order. */
  attrs: [string, string][];
  children: XmlNode[];
}

/** A child: an element or a run of character data. */
export type XmlNode = XmlElement | string;

/** The namespace of the `xml:` prefix, always in scope (Namespaces in XML 1.0 §3). */
export const XML_NS = "http://www.w3.org/XML/1998/namespace";

/** Builds an element; attributes whose value is undefined are left out. */
export function el(name: string, attrs: Record<string, string | undefined> = {}, children: (XmlNode | null | undefined | false)[] = []): XmlElement {
  return {
    name,
    attrs: Object.entries(attrs).filter((e): e is [string, string] => e[1] !== undefined),
    children: children.filter((c): c is XmlNode => c !== null && c !== undefined && c !== false),
  };
}

export const prefixOf = (qname: string): string => (qname.includes(":") ? qname.slice(0, qname.indexOf(":")) : "");
export const localOf = (qname: string): string => (qname.includes(":") ? qname.slice(qname.indexOf(":") + 1) : qname);

const isDeclaration = (name: string) => name === "xmlns" || name.startsWith("xmlns:");
const declaredPrefix = (name: string) => (name === "xmlns" ? "" : name.slice(6));

/** In-scope namespaces: prefix -> URI ("" is the default namespace). */
export type Scope = ReadonlyMap<string, string>;

export const EMPTY_SCOPE: Scope = new Map([["xml", XML_NS]]);

/** The scope inside an element: its parent's scope plus its own declarations. */
export function scopeOf(element: XmlElement, parent: Scope): Scope {
  const declarations = element.attrs.filter(([name]) => isDeclaration(name));
  if (!declarations.length) return parent;
  const scope = new Map(parent);
  for (const [name, value] of declarations) scope.set(declaredPrefix(name), value);
  return scope;
}

/** The namespace URI of an element or attribute name in a scope (unprefixed attributes have none). */
export function namespaceOf(qname: string, scope: Scope, isAttribute = false): string {
  const prefix = prefixOf(qname);
  if (prefix === "" && isAttribute) return "";
  return scope.get(prefix) ?? "";
}

/** The non-declaration attributes of an element. */
export const plainAttributes = (element: XmlElement) => element.attrs.filter(([name]) => !isDeclaration(name));

export const attribute = (element: XmlElement, name: string): string | undefined => element.attrs.find(([n]) => n === name)?.[1];

/** Child elements, optionally those with a given namespace URI and local name. */
export function childElements(element: XmlElement, scope: Scope, ns?: string, local?: string): XmlElement[] {
  const inner = scopeOf(element, scope);
  return element.children.filter(
    (c): c is XmlElement =>
      typeof c !== "string" && (local === undefined || (localOf(c.name) === local && namespaceOf(c.name, scopeOf(c, inner)) === ns)),
  );
}

/** The concatenated character data directly inside an element. */
export const textOf = (element: XmlElement): string => element.children.filter((c): c is string => typeof c === "string").join("");

/** XML-escaped text content (C14N 1.0 §2.3: &, <, > and carriage return). */
export const escapeText = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#xD;");

/** XML-escaped attribute value (C14N 1.0 §2.3: &, <, ", tab, line feed, carriage return). */
export const escapeAttribute = (value: string) =>
  value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/"/g, "&quot;")
    .replace(/\t/g, "&#x9;")
    .replace(/\n/g, "&#xA;")
    .replace(/\r/g, "&#xD;");

/**
 * Serializes a tree as written (every declaration where it was put), in the same lexical form as the
 * canonical one (start and end tags for empty elements, C14N escaping), so what a verifier parses is the
 * tree that was signed.
 */
export function serialize(node: XmlNode): string {
  if (typeof node === "string") return escapeText(node);
  const attrs = node.attrs.map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`).join("");
  return `<${node.name}${attrs}>${node.children.map(serialize).join("")}</${node.name}>`;
}
