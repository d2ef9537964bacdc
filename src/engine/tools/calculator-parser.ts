/**
 * Safe arithmetic evaluator for the built-in `calculator` tool: a tokenizer plus a
 * recursive-descent parser that evaluates as it parses (no eval, no Function).
 *
 * Grammar, lowest to highest precedence (identifiers are case-insensitive):
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%") unary)*          "%" is remainder, never percent
 *   unary      := ("+" | "-")* power
 *   power      := primary (("^" | "**") unary)?            right-assoc: 2^3^2 = 2^9, -2^2 = -4, 2^-1 = 0.5
 *   primary    := NUMBER | CONSTANT | FUNCTION "(" [expression ("," expression)*] ")" | "(" expression ")"
 *   NUMBER     := (digits ["." digits] | "." digits) [("e" | "E") ["+" | "-"] digits]
 * There is no implicit multiplication (`2pi` is an error). Positions in error messages are
 * 0-based character offsets into the input. Only the final result is checked for finiteness.
 */

export class CalculatorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CalculatorError";
  }
}

const MAX_LENGTH = 1000;
const MAX_DEPTH = 100;

const CONSTANTS = new Map<string, number>([
  ["pi", Math.PI],
  ["e", Math.E],
  ["tau", 2 * Math.PI],
]);

interface Fn {
  fn: (...args: number[]) => number;
  min: number;
  max: number;
}
const one = (fn: (x: number) => number): Fn => ({ fn, min: 1, max: 1 });
const many = (fn: (...xs: number[]) => number): Fn => ({ fn, min: 1, max: Infinity });
const FUNCTIONS = new Map<string, Fn>([
  ["sqrt", one(Math.sqrt)],
  ["abs", one(Math.abs)],
  ["sin", one(Math.sin)],
  ["cos", one(Math.cos)],
  ["tan", one(Math.tan)],
  ["asin", one(Math.asin)],
  ["acos", one(Math.acos)],
  ["atan", one(Math.atan)],
  ["ln", one(Math.log)],
  ["log", one(Math.log10)],
  ["log2", one(Math.log2)],
  ["exp", one(Math.exp)],
  ["floor", one(Math.floor)],
  ["ceil", one(Math.ceil)],
  ["round", one(Math.round)],
  ["min", many(Math.min)],
  ["max", many(Math.max)],
  ["hypot", many(Math.hypot)],
  ["pow", { fn: Math.pow, min: 2, max: 2 }],
]);

type TokenType = "number" | "name" | "op" | "(" | ")" | "," | "end";
interface Token {
  type: TokenType;
  text: string;
  pos: number;
}

const NUMBER_RE = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME_RE = /[A-Za-z_][A-Za-z0-9_]*/y;
const WHITESPACE_RE = /\s/;

function matchAt(re: RegExp, src: string, pos: number): string | undefined {
  re.lastIndex = pos;
  return re.exec(src)?.[0];
}

function readToken(src: string, pos: number): Token {
  const number = matchAt(NUMBER_RE, src, pos);
  if (number) return { type: "number", text: number, pos };
  const name = matchAt(NAME_RE, src, pos);
  if (name) return { type: "name", text: name, pos };
  if (src.startsWith("**", pos)) return { type: "op", text: "**", pos };
  const ch = src[pos]!;
  if ("+-*/%^".includes(ch)) return { type: "op", text: ch, pos };
  if (ch === "(" || ch === ")" || ch === ",") return { type: ch, text: ch, pos };
  throw new CalculatorError(`Unexpected character "${ch}" at position ${pos}`);
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < src.length) {
    if (WHITESPACE_RE.test(src[pos]!)) {
      pos++;
    } else {
      const token = readToken(src, pos);
      tokens.push(token);
      pos += token.text.length;
    }
  }
  tokens.push({ type: "end", text: "", pos });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.expression();
    if (this.peek().type !== "end") throw this.unexpected(this.peek());
    return value;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private isOp(...ops: string[]): Token | undefined {
    const tok = this.peek();
    return tok.type === "op" && ops.includes(tok.text) ? tok : undefined;
  }

  private unexpected(tok: Token): CalculatorError {
    if (tok.type === "end") return new CalculatorError("Unexpected end of expression");
    const prev = this.tokens[this.index - 1];
    const implicit = ["number", "name", "("].includes(tok.type) && prev !== undefined && ["number", "name", ")"].includes(prev.type);
    const hint = implicit ? " (implicit multiplication is not supported)" : "";
    return new CalculatorError(`Unexpected "${tok.text}" at position ${tok.pos}${hint}`);
  }

  private expression(): number {
    let left = this.term();
    for (let op = this.isOp("+", "-"); op; op = this.isOp("+", "-")) {
      this.index++;
      const right = this.term();
      left = op.text === "+" ? left + right : left - right;
    }
    return left;
  }

  private term(): number {
    let left = this.unary();
    for (let op = this.isOp("*", "/", "%"); op; op = this.isOp("*", "/", "%")) {
      this.index++;
      const right = this.unary();
      if (op.text === "*") left *= right;
      else if (right === 0) throw new CalculatorError(`Division by zero at position ${op.pos}`);
      else left = op.text === "/" ? left / right : left % right;
    }
    return left;
  }

  private unary(): number {
    let negate = false;
    for (let op = this.isOp("+", "-"); op; op = this.isOp("+", "-")) {
      if (op.text === "-") negate = !negate;
      this.index++;
    }
    const value = this.power();
    return negate ? -value : value;
  }

  private power(): number {
    const base = this.primary();
    if (!this.isOp("^", "**")) return base;
    this.index++;
    return base ** this.unary();
  }

  private primary(): number {
    const tok = this.peek();
    if (tok.type === "number") {
      this.index++;
      return Number(tok.text);
    }
    if (tok.type === "name") {
      this.index++;
      return this.name(tok);
    }
    if (tok.type !== "(") throw this.unexpected(tok);
    this.open();
    const value = this.expression();
    this.close(tok);
    return value;
  }

  private name(tok: Token): number {
    const name = tok.text.toLowerCase();
    if (this.peek().type !== "(") {
      const constant = CONSTANTS.get(name);
      if (constant !== undefined) return constant;
      if (FUNCTIONS.has(name)) {
        throw new CalculatorError(`Function "${name}" must be followed by "(" at position ${tok.pos}`);
      }
      throw new CalculatorError(`Unknown identifier "${tok.text}" at position ${tok.pos}`);
    }
    const fn = FUNCTIONS.get(name);
    if (!fn) throw new CalculatorError(`Unknown function "${tok.text}" at position ${tok.pos}`);
    const openTok = this.open();
    const args: number[] = [];
    if (this.peek().type !== ")") {
      args.push(this.expression());
      while (this.peek().type === ",") {
        this.index++;
        args.push(this.expression());
      }
    }
    this.close(openTok);
    if (args.length < fn.min || args.length > fn.max) {
      const count = fn.max === Infinity ? `at least ${fn.min}` : String(fn.min);
      const noun = fn.min === 1 ? "argument" : "arguments";
      throw new CalculatorError(`Function "${name}" expects ${count} ${noun}, got ${args.length}`);
    }
    return fn.fn(...args);
  }

  private open(): Token {
    const tok = this.tokens[this.index++]!;
    if (++this.depth > MAX_DEPTH) {
      throw new CalculatorError(`Parentheses nested too deeply at position ${tok.pos} (limit ${MAX_DEPTH})`);
    }
    return tok;
  }

  private close(openTok: Token): void {
    const tok = this.peek();
    if (tok.type === "end") throw new CalculatorError(`Missing ")" for "(" at position ${openTok.pos}`);
    if (tok.type !== ")") throw this.unexpected(tok);
    this.index++;
    this.depth--;
  }
}

/** Evaluates an arithmetic expression; throws CalculatorError on any invalid input or non-finite result. */
export function evaluateExpression(expression: string): number {
  if (typeof expression !== "string") throw new CalculatorError("Expression must be a string");
  if (expression.length > MAX_LENGTH) {
    throw new CalculatorError(`Expression is too long (${expression.length} characters, limit ${MAX_LENGTH})`);
  }
  const tokens = tokenize(expression);
  if (tokens.length === 1) throw new CalculatorError("Expression is empty");
  const result = new Parser(tokens).parse();
  if (!Number.isFinite(result)) throw new CalculatorError("Result is not a finite number");
  return result === 0 ? 0 : result; // normalise -0
}
