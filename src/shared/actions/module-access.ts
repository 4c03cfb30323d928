/**
 * What tenant code may load (issue 25 finding 2): only Node built-ins that reach nothing of the sandbox. The
 * isolate's module registry also holds the harness and the guard; an action that could import them could
 * restart its own deadline. `module` (createRequire) and `process.getBuiltinModule` would load any module by a
 * computed name, so they are refused as well. The harness repeats the last check at run time.
 */
const BUILTINS = ["assert", "buffer", "crypto", "events", "path", "punycode", "querystring", "string_decoder", "url", "util"];

/** Specifiers `require` and `import()` accept, with and without the `node:` prefix. */
export const ALLOWED_MODULES: ReadonlySet<string> = new Set(BUILTINS.flatMap((name) => [name, `node:${name}`]));

interface Node {
  type: string;
  [key: string]: unknown;
}

const allowedSpecifier = (node: unknown): boolean => {
  const n = node as Node | undefined;
  return n?.type === "Literal" && typeof n.value === "string" && ALLOWED_MODULES.has(n.value);
};

/** Whether an identifier is a property name (`a.require`, `{ require: 1 }`), not a reference to a binding. */
function isPropertyName(node: Node, parent: Node | null): boolean {
  if (!parent) return false;
  if (parent.type === "MemberExpression") return parent.property === node && !parent.computed;
  if (parent.type === "Property") return parent.key === node && !parent.computed && !parent.shorthand;
  if (parent.type === "MethodDefinition" || parent.type === "PropertyDefinition") return parent.key === node && !parent.computed;
  return false;
}

const propertyNamed = (node: Node, name: string): boolean => {
  const p = node.property as Node;
  return node.computed ? p.type === "Literal" && p.value === name : p.type === "Identifier" && p.name === name;
};

/**
 * Why a node loads a module tenant code must not reach, or null. `require` is accepted only as the callee
 * of a call with one literal allowed specifier, so it cannot be aliased or called with a computed name.
 */
export function moduleAccessRefusal(node: Node, parent: Node | null): string | null {
  const allowed = `only these built-in modules can be loaded: ${BUILTINS.join(", ")}`;
  if (node.type === "ImportExpression") return allowedSpecifier(node.source) ? null : `import() of this module is not allowed; ${allowed}`;
  if (node.type === "Identifier" && node.name === "require" && !isPropertyName(node, parent)) {
    const call = parent?.type === "CallExpression" && parent.callee === node ? parent : null;
    const args = (call?.arguments as unknown[] | undefined) ?? [];
    return call && args.length === 1 && allowedSpecifier(args[0]) ? null : `require of this module is not allowed; ${allowed}`;
  }
  if (node.type === "MemberExpression" && propertyNamed(node, "getBuiltinModule")) return `process.getBuiltinModule is not allowed; ${allowed}`;
  return null;
}
