/**
 * Recursive-descent parser of the `q` language (SPEC §4.2 "Search rules").
 *
 * Precedence, lowest first: `OR`, then `AND` (explicit or by juxtaposition), then `NOT` / `-`, then a
 * term, range or parenthesised group. SPEC §4.2: "clauses inside an OR group are conjoined, so
 * `a b OR c` means (a AND b) OR c".
 */
import { LUCENE_LIMITS, LuceneError, type LuceneNode } from "./ast";
import { type Token, tokenize } from "./tokenize";

/**
 * Parses `q` into an AST. Returns null for an empty or whitespace-only query ("no filter"); throws
 * {@link LuceneError} for anything malformed.
 */
export function parseLucene(q: string): LuceneNode | null {
  if (q.trim() === "") {
    // Still validate: whitespace padding around a NUL must not slip through as "no filter".
    tokenize(q);
    return null;
  }
  const tokens = tokenize(q);
  if (tokens.length === 0) return null;
  const p = new Parser(tokens, q.length);
  const node = p.parseOr(0);
  p.expectEnd();
  return node;
}

class Parser {
  private i = 0;
  private clauses = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly end: number,
  ) {}

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }
  private pos(): number {
    return this.peek()?.pos ?? this.end;
  }

  expectEnd(): void {
    const t = this.peek();
    if (!t) return;
    if (t.t === "rparen") throw new LuceneError("syntax", "unbalanced parenthesis: unexpected ')'", t.pos);
    throw new LuceneError("syntax", `unexpected ${describe(t)}`, t.pos);
  }

  parseOr(depth: number): LuceneNode {
    const children = [this.parseAnd(depth)];
    while (this.peek()?.t === "or") {
      const op = this.tokens[this.i++] as Token;
      if (!this.startsClause()) throw new LuceneError("syntax", "dangling OR: it must be followed by a clause", op.pos);
      children.push(this.parseAnd(depth));
    }
    return children.length === 1 ? (children[0] as LuceneNode) : { kind: "or", children };
  }

  /** True when the next token can begin a clause (used to name dangling operators). */
  private startsClause(): boolean {
    const t = this.peek()?.t;
    return t === "term" || t === "range" || t === "lparen" || t === "not" || t === "minus";
  }

  private parseAnd(depth: number): LuceneNode {
    if (!this.startsClause()) {
      const t = this.peek();
      if (!t) throw new LuceneError("syntax", "empty query part", this.end);
      if (t.t === "rparen") throw new LuceneError("syntax", "empty group or unbalanced ')'", t.pos);
      throw new LuceneError("syntax", `dangling ${describe(t)}: it must follow a clause`, t.pos);
    }
    const children = [this.parseUnary(depth)];
    for (;;) {
      const t = this.peek();
      if (t?.t === "and") {
        this.i++;
        if (!this.startsClause()) throw new LuceneError("syntax", "dangling AND: it must be followed by a clause", t.pos);
        children.push(this.parseUnary(depth));
      } else if (this.startsClause()) {
        children.push(this.parseUnary(depth)); // implicit AND by juxtaposition
      } else {
        break;
      }
    }
    return children.length === 1 ? (children[0] as LuceneNode) : { kind: "and", children };
  }

  private parseUnary(depth: number): LuceneNode {
    const t = this.peek();
    if (t?.t === "not" || t?.t === "minus") {
      this.i++;
      this.checkDepth(depth + 1, t.pos);
      if (!this.startsClause()) {
        throw new LuceneError("syntax", `dangling ${t.t === "not" ? "NOT" : "-"}: it must be followed by a clause`, t.pos);
      }
      return { kind: "not", child: this.parseUnary(depth + 1) };
    }
    return this.parsePrimary(depth);
  }

  private checkDepth(depth: number, pos: number): void {
    if (depth > LUCENE_LIMITS.maxDepth) {
      throw new LuceneError("too_deep", `nesting deeper than ${LUCENE_LIMITS.maxDepth} levels`, pos);
    }
  }

  private parsePrimary(depth: number): LuceneNode {
    const t = this.tokens[this.i++] as Token;
    if (t.t === "lparen") {
      this.checkDepth(depth + 1, t.pos);
      if (this.peek()?.t === "rparen") throw new LuceneError("syntax", "empty group '()'", t.pos);
      const inner = this.parseOr(depth + 1);
      const close = this.peek();
      if (close?.t !== "rparen") throw new LuceneError("syntax", "unbalanced parenthesis: '(' is not closed", t.pos);
      this.i++;
      return inner;
    }
    if (++this.clauses > LUCENE_LIMITS.maxClauses) {
      throw new LuceneError("too_complex", `more than ${LUCENE_LIMITS.maxClauses} clauses`, t.pos);
    }
    if (t.t === "range") {
      if (t.lower === null && t.upper === null) return { kind: "exists", field: t.field };
      const { field, lower, upper, includeLower, includeUpper } = t;
      return { kind: "range", field, lower, upper, includeLower, includeUpper };
    }
    if (t.t === "term") {
      if (t.field === "_exists_") {
        if (t.phrase || t.prefix || t.value === "") {
          throw new LuceneError("syntax", "_exists_ needs a plain field name", t.pos);
        }
        return { kind: "exists", field: t.value };
      }
      if (t.field !== null && t.prefix && t.value === "") return { kind: "exists", field: t.field };
      if (t.field === null && t.prefix && t.value === "") {
        throw new LuceneError("syntax", "a lone '*' is not a filter (omit q to list everything)", t.pos);
      }
      if (t.value === "" && !t.phrase) throw new LuceneError("syntax", "empty term", t.pos);
      return { kind: "term", field: t.field, value: t.value, phrase: t.phrase, prefix: t.prefix, ...(t.suffix ? { suffix: true as const } : {}) };
    }
    throw new LuceneError("syntax", `unexpected ${describe(t)}`, t.pos);
  }
}

function describe(t: Token): string {
  switch (t.t) {
    case "and":
      return "AND";
    case "or":
      return "OR";
    case "not":
      return "NOT";
    case "minus":
      return "'-'";
    case "lparen":
      return "'('";
    case "rparen":
      return "')'";
    default:
      return "term";
  }
}
