import { parse } from "acorn";
import { moduleAccessRefusal } from "./module-access";

/**
 * Makes tenant code stoppable (issue 13, PLATFORM.md "Worker Loader"): locally `limits.cpuMs` is not
 * enforced and an endless loop in a loaded isolate freezes the whole runtime, so no timer on the host side
 * can fire. Before a version is stored, its source is parsed (never evaluated) and a call to the guard
 * {@link GUARD} is inserted at the head of every loop body, function body and catch block. The guard (defined
 * by the sandbox harness as a non-writable global) counts steps and checks the run's deadline; once spent it
 * throws on every later call, so a `catch` cannot swallow it. Production additionally has `cpuMs`.
 */
export const GUARD = "__gh_step";

export type Compiled = { ok: true; code: string } | { ok: false; message: string; line?: number; column?: number };

interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as Node).type === "string" && typeof (value as Node).start === "number";

const LOOPS = new Set(["ForStatement", "ForInStatement", "ForOfStatement", "WhileStatement", "DoWhileStatement"]);
const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** Visits every node depth first, with its parent (whether `require` is called or aliased depends on it). */
function walk(node: Node, visit: (node: Node, parent: Node | null) => void, parent: Node | null = null): void {
  visit(node, parent);
  for (const key of Object.keys(node)) {
    const child = node[key];
    if (Array.isArray(child)) {
      for (const item of child) if (isNode(item)) walk(item, visit, node);
    } else if (isNode(child)) {
      walk(child, visit, node);
    }
  }
}

/** Where a block's statements start, after its directive prologue (`"use strict"` must stay first). */
function afterDirectives(block: Node): number {
  const body = (block.body as Node[]) ?? [];
  let at = block.start + 1;
  for (const statement of body) {
    if (statement.type !== "ExpressionStatement" || typeof statement.directive !== "string") break;
    at = statement.end;
  }
  return at;
}

/**
 * Parses CommonJS action source and returns it with guard calls inserted, or the syntax error. Code that
 * names the guard, uses `with` (which could shadow it), or loads anything but an allowed built-in module
 * (`./guard.js` would let it restart its own deadline: issue 25 finding 2) is refused.
 */
export function instrumentAction(source: string): Compiled {
  let ast: Node;
  try {
    ast = parse(source, {
      ecmaVersion: "latest",
      sourceType: "script",
      allowReturnOutsideFunction: true,
      allowHashBang: true,
      allowAwaitOutsideFunction: false,
      locations: true,
    }) as unknown as Node;
  } catch (error) {
    const e = error as SyntaxError & { loc?: { line: number; column: number } };
    return { ok: false, message: e.message, ...(e.loc ? { line: e.loc.line, column: e.loc.column } : {}) };
  }
  const inserts: { at: number; text: string }[] = [];
  const call = `${GUARD}();`;
  let refusal: string | null = null;
  const block = (body: Node) => {
    if (body.type === "BlockStatement") inserts.push({ at: afterDirectives(body), text: call });
    else {
      inserts.push({ at: body.start, text: `{${call}` });
      inserts.push({ at: body.end, text: "}" });
    }
  };
  walk(ast, (node, parent) => {
    if (node.type === "Identifier" && String(node.name).startsWith("__gh_")) refusal ??= `The identifier ${String(node.name)} is reserved`;
    refusal ??= moduleAccessRefusal(node, parent);
    if (node.type === "WithStatement") refusal ??= "with statements are not supported";
    if (LOOPS.has(node.type)) block(node.body as Node);
    else if (FUNCTIONS.has(node.type)) {
      const body = node.body as Node;
      if (body.type === "BlockStatement") block(body);
      else {
        // An arrow function's expression body: `(guard(), expr)` keeps its value.
        inserts.push({ at: body.start, text: `(${GUARD}(),` });
        inserts.push({ at: body.end, text: ")" });
      }
    } else if (node.type === "CatchClause") block(node.body as Node);
    else if (node.type === "StaticBlock") inserts.push({ at: source.indexOf("{", node.start) + 1, text: call });
  });
  if (refusal) return { ok: false, message: refusal };
  // Apply from the end so earlier positions stay valid; at one position, later inserts go first.
  inserts.sort((a, b) => b.at - a.at);
  let out = source;
  for (const { at, text } of inserts) out = out.slice(0, at) + text + out.slice(at);
  return { ok: true, code: out };
}
