/**
 * A small, strict XML parser for the messages Gatehouse accepts (a SAML AuthnRequest is a few hundred
 * bytes). It is deliberately not a general parser: no DTD (`<!DOCTYPE` is refused, so no entity
 * declarations, no external entities, no entity expansion attacks), only the five predefined entities and
 * character references, no processing instructions beyond the XML declaration, bounded size, depth and
 * element count, every prefix declared. Comments are dropped; CDATA sections become text. Line ends are
 * normalized and attribute whitespace replaced by spaces (XML 1.0 §2.11, §3.3.3), so a parsed tree
 * canonicalizes as the document it came from.
 */
import { EMPTY_SCOPE, prefixOf, type Scope, scopeOf, type XmlElement } from "./tree";

/** Limits of one parse. */
export interface ParseLimits {
  /** @default 65536 characters */
  maxLength?: number;
  /** @default 32 */
  maxDepth?: number;
  /** @default 1000 */
  maxElements?: number;
}

export class XmlParseError extends Error {
  override name = "XmlParseError";
}

const NAME = /^[A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?/;
const PREDEFINED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** A code point XML 1.0 §2.2 allows. */
const isXmlChar = (cp: number) =>
  cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);

function decodeReferences(raw: string): string {
  return raw.replace(/&([^;&<]*);?/g, (match, body: string) => {
    if (!match.endsWith(";")) throw new XmlParseError("Unterminated entity reference");
    if (body in PREDEFINED) return PREDEFINED[body] as string;
    const numeric = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(body);
    if (!numeric) throw new XmlParseError(`Undeclared entity &${body};`);
    const cp = numeric[1] !== undefined ? Number.parseInt(numeric[1], 16) : Number(numeric[2]);
    if (!isXmlChar(cp)) throw new XmlParseError("Character reference to a character XML does not allow");
    return String.fromCodePoint(cp);
  });
}

/** Parses one document into its root element; throws XmlParseError on anything outside the subset. */
export function parseXml(input: string, limits: ParseLimits = {}): XmlElement {
  const maxLength = limits.maxLength ?? 65_536;
  const maxDepth = limits.maxDepth ?? 32;
  const maxElements = limits.maxElements ?? 1000;
  if (input.length > maxLength) throw new XmlParseError(`Document longer than ${maxLength} characters`);
  for (const ch of input) {
    if (!isXmlChar(ch.codePointAt(0) ?? 0)) throw new XmlParseError("Document contains a character XML does not allow");
  }
  const text = input.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  let at = 0;
  let elements = 0;
  const stack: { element: XmlElement; scope: Scope }[] = [];
  let root: XmlElement | null = null;

  const fail = (message: string): never => {
    throw new XmlParseError(`${message} at offset ${at}`);
  };
  const startsWith = (s: string) => text.startsWith(s, at);
  const skipSpace = () => {
    while (at < text.length && /[ \t\n]/.test(text[at] as string)) at++;
  };
  const readName = (): string => {
    const match = NAME.exec(text.slice(at, at + 256));
    if (!match) fail("Expected a name");
    at += (match as RegExpExecArray)[0].length;
    return (match as RegExpExecArray)[0];
  };
  const until = (end: string, what: string): string => {
    const close = text.indexOf(end, at);
    if (close < 0) fail(`Unterminated ${what}`);
    const body = text.slice(at, close);
    at = close + end.length;
    return body;
  };
  const appendText = (value: string) => {
    const top = stack[stack.length - 1];
    if (!top) {
      if (value.trim()) fail("Text outside the root element");
      return;
    }
    const last = top.element.children[top.element.children.length - 1];
    if (typeof last === "string") top.element.children[top.element.children.length - 1] = last + value;
    else top.element.children.push(value);
  };

  if (startsWith("<?xml")) {
    until("?>", "XML declaration");
  }
  while (at < text.length) {
    if (startsWith("<!--")) {
      at += 4;
      const body = until("-->", "comment");
      if (body.includes("--")) fail("'--' inside a comment");
    } else if (startsWith("<![CDATA[")) {
      if (!stack.length) fail("CDATA outside the root element");
      at += 9;
      appendText(until("]]>", "CDATA section"));
    } else if (startsWith("<!")) {
      fail("Document type declarations are not accepted");
    } else if (startsWith("<?")) {
      fail("Processing instructions are not accepted");
    } else if (startsWith("</")) {
      at += 2;
      const name = readName();
      skipSpace();
      if (text[at] !== ">") fail("Expected '>'");
      at++;
      const open = stack.pop();
      if (!open || open.element.name !== name) fail(`Mismatched end tag </${name}>`);
      if (!stack.length) root = (open as { element: XmlElement }).element;
    } else if (text[at] === "<") {
      if (root) fail("Content after the root element");
      at++;
      const element: XmlElement = { name: readName(), attrs: [], children: [] };
      if (++elements > maxElements) fail("Too many elements");
      for (;;) {
        const before = at;
        skipSpace();
        if (startsWith("/>") || text[at] === ">") break;
        if (before === at) fail("Expected whitespace before an attribute");
        const name = readName();
        skipSpace();
        if (text[at] !== "=") fail("Expected '='");
        at++;
        skipSpace();
        const quote = text[at];
        if (quote !== '"' && quote !== "'") fail("Expected a quoted attribute value");
        at++;
        const raw = until(quote as string, "attribute value");
        if (raw.includes("<")) fail("'<' in an attribute value");
        if (element.attrs.some(([n]) => n === name)) fail(`Repeated attribute ${name}`);
        element.attrs.push([name, decodeReferences(raw.replace(/[\t\n]/g, " "))]);
      }
      const parent = stack[stack.length - 1];
      const scope = scopeOf(element, parent?.scope ?? EMPTY_SCOPE);
      for (const name of [element.name, ...element.attrs.map(([n]) => n).filter((n) => n !== "xmlns" && !n.startsWith("xmlns:"))]) {
        const prefix = prefixOf(name);
        if (prefix && !scope.has(prefix)) fail(`Undeclared namespace prefix ${prefix}`);
      }
      if (parent) parent.element.children.push(element);
      if (startsWith("/>")) {
        at += 2;
        if (!parent) root = element;
      } else {
        at++;
        if (stack.length + 1 > maxDepth) fail("Elements nested too deeply");
        stack.push({ element, scope });
      }
    } else {
      const next = text.indexOf("<", at);
      const end = next < 0 ? text.length : next;
      const raw = text.slice(at, end);
      at = end;
      if (raw.includes("]]>")) fail("']]>' in text");
      appendText(decodeReferences(raw));
    }
  }
  if (stack.length || !root) throw new XmlParseError("Unexpected end of document");
  return root;
}
