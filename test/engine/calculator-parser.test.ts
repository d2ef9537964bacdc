import { describe, expect, it } from "vitest";
import { CalculatorError, evaluateExpression } from "../../src/engine/tools/calculator-parser";
import { prng } from "../support/prng";

const ev = evaluateExpression;

function errorOf(expression: string): CalculatorError {
  try {
    ev(expression);
  } catch (err) {
    expect(err).toBeInstanceOf(CalculatorError);
    expect((err as Error).name).toBe("CalculatorError");
    return err as CalculatorError;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to throw`);
}

describe("precedence and associativity", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 4 - 3", 3],
    ["100 / 10 / 5", 2],
    ["2 * 3 % 4", 2],
    ["7 % 4 * 3", 9],
    ["1 + 7 % 4", 4],
    ["10 % 3", 1],
    ["-7 % 3", -1],
    ["5.5 % 2", 1.5],
    ["2 ^ 3 ^ 2", 512],
    ["2 ** 3 ** 2", 512],
    ["(2 ^ 3) ^ 2", 64],
    ["2 * 3 ^ 2", 18],
    ["2 ^ 3 * 2", 16],
    ["2 ^ 2 ** 3", 256],
    ["1 - 2 + 3", 2],
    ["  1\t+\n2  ", 3],
  ])("%s = %d", (expr, expected) => {
    expect(ev(expr)).toBe(expected);
  });
});

describe("unary operators", () => {
  it.each([
    ["-2^2", -4],
    ["-2**2", -4],
    ["(-2)^2", 4],
    ["2^-1", 0.5],
    ["2^-1^2", 0.5],
    ["2 ** -2", 0.25],
    ["--3", 3],
    ["- - -3", -3],
    ["+3", 3],
    ["+-+3", -3],
    ["1 - -1", 2],
    ["1 + -1 * 2", -1],
    ["2 * -3", -6],
    ["-2 * 3", -6],
    ["-(1 + 2)", -3],
    ["-sqrt(4)", -2],
    ["-pi", -Math.PI],
    ["-0", 0],
    ["-2^-2", -0.25],
  ])("%s = %d", (expr, expected) => {
    expect(ev(expr)).toBe(expected);
  });

  it("normalises negative zero to zero", () => {
    expect(Object.is(ev("-0"), 0)).toBe(true);
    expect(Object.is(ev("0 * -1"), 0)).toBe(true);
  });
});

describe("numbers", () => {
  it.each([
    ["42", 42],
    ["3.25", 3.25],
    [".5", 0.5],
    ["1.", 1],
    ["1e3", 1000],
    ["1E3", 1000],
    ["2.5E-2", 0.025],
    ["2.5e+2", 250],
    [".5e1", 5],
    ["1.e2", 100],
    ["007", 7],
  ])("%s = %d", (expr, expected) => {
    expect(ev(expr)).toBe(expected);
  });

  it("rejects malformed numbers", () => {
    expect(errorOf("1.2.3").message).toBe('Unexpected ".3" at position 3 (implicit multiplication is not supported)');
    expect(errorOf(".").message).toBe('Unexpected character "." at position 0');
    // "1e" is the number 1 followed by the constant e, which would be implicit multiplication.
    expect(errorOf("1e").message).toBe('Unexpected "e" at position 1 (implicit multiplication is not supported)');
    expect(errorOf("1e+").message).toMatch(/^Unexpected "e" at position 1/);
  });
});

describe("constants", () => {
  it("knows pi, e and tau, case-insensitively", () => {
    expect(ev("pi")).toBe(Math.PI);
    expect(ev("PI")).toBe(Math.PI);
    expect(ev("e")).toBe(Math.E);
    expect(ev("E")).toBe(Math.E);
    expect(ev("tau")).toBe(2 * Math.PI);
    expect(ev("Tau / 2")).toBe(Math.PI);
    expect(ev("e ^ 2")).toBe(Math.E ** 2);
  });

  it("does not confuse e the constant with the exponent marker", () => {
    expect(ev("e+1")).toBe(Math.E + 1);
    expect(ev("2*e")).toBe(2 * Math.E);
    expect(ev("2e1")).toBe(20);
  });

  it("rejects unknown identifiers", () => {
    expect(errorOf("x + 1").message).toBe('Unknown identifier "x" at position 0');
    expect(errorOf("1 + constructor").message).toBe('Unknown identifier "constructor" at position 4');
  });
});

describe("functions", () => {
  it.each([
    ["sqrt(16)", 4],
    ["abs(-3)", 3],
    ["sin(0)", 0],
    ["cos(0)", 1],
    ["tan(0)", 0],
    ["asin(1)", Math.PI / 2],
    ["acos(1)", 0],
    ["atan(1)", Math.PI / 4],
    ["ln(e)", 1],
    ["log(1000)", 3],
    ["log2(8)", 3],
    ["exp(0)", 1],
    ["floor(-2.5)", -3],
    ["ceil(2.1)", 3],
    ["round(2.5)", 3],
    ["min(3, 1, 2)", 1],
    ["max(3, 1, 2)", 3],
    ["min(5)", 5],
    ["hypot(3, 4)", 5],
    ["hypot(-7)", 7],
    ["pow(2, 10)", 1024],
    ["SQRT(9)", 3],
    ["Max(1, 2)", 2],
    ["sqrt ( 4 )", 2],
    ["max(1, 2) * min(3, 4) + pow(2, 1 + 1)", 10],
    ["sqrt(sqrt(16))", 2],
    ["abs(-2)^2", 4],
    ["-abs(-2)^2", -4],
    ["max(-1, -2, -(3))", -1],
  ])("%s = %d", (expr, expected) => {
    expect(ev(expr)).toBeCloseTo(expected, 12);
  });

  it("checks argument counts", () => {
    expect(errorOf("sqrt(1, 2)").message).toBe('Function "sqrt" expects 1 argument, got 2');
    expect(errorOf("sin()").message).toBe('Function "sin" expects 1 argument, got 0');
    expect(errorOf("pow(2)").message).toBe('Function "pow" expects 2 arguments, got 1');
    expect(errorOf("pow(1, 2, 3)").message).toBe('Function "pow" expects 2 arguments, got 3');
    expect(errorOf("min()").message).toBe('Function "min" expects at least 1 argument, got 0');
    expect(errorOf("max()").message).toBe('Function "max" expects at least 1 argument, got 0');
    expect(errorOf("HYPOT()").message).toBe('Function "hypot" expects at least 1 argument, got 0');
  });

  it("rejects unknown functions and misused names", () => {
    expect(errorOf("foo(1)").message).toBe('Unknown function "foo" at position 0');
    expect(errorOf("1 + Foo(1)").message).toBe('Unknown function "Foo" at position 4');
    expect(errorOf("pi(2)").message).toBe('Unknown function "pi" at position 0');
    expect(errorOf("eval(1)").message).toMatch(/^Unknown function "eval"/);
    expect(errorOf("__proto__(1)").message).toMatch(/^Unknown function "__proto__"/);
    expect(errorOf("sqrt 4").message).toBe('Function "sqrt" must be followed by "(" at position 0');
    expect(errorOf("sqrt").message).toBe('Function "sqrt" must be followed by "(" at position 0');
  });

  it("rejects malformed argument lists", () => {
    expect(errorOf("max(1,)").message).toBe('Unexpected ")" at position 6');
    expect(errorOf("max(,1)").message).toBe('Unexpected "," at position 4');
    expect(errorOf("max(1 2)").message).toBe('Unexpected "2" at position 6 (implicit multiplication is not supported)');
    expect(errorOf("sqrt(4").message).toBe('Missing ")" for "(" at position 4');
    expect(errorOf("1, 2").message).toBe('Unexpected "," at position 1');
  });
});

describe("errors", () => {
  it("reports unexpected tokens with their position", () => {
    expect(errorOf("(1+2))").message).toBe('Unexpected ")" at position 5');
    expect(errorOf("1 + * 2").message).toBe('Unexpected "*" at position 4');
    expect(errorOf("()").message).toBe('Unexpected ")" at position 1');
    expect(errorOf("2 * * 3").message).toBe('Unexpected "*" at position 4');
    expect(errorOf("2 ^").message).toBe("Unexpected end of expression");
    expect(errorOf("1 +").message).toBe("Unexpected end of expression");
    expect(errorOf("-").message).toBe("Unexpected end of expression");
    expect(errorOf("(1 + 2").message).toBe('Missing ")" for "(" at position 0');
    expect(errorOf("((1)").message).toBe('Missing ")" for "(" at position 0');
  });

  it("reports unexpected characters", () => {
    expect(errorOf("1 + $").message).toBe('Unexpected character "$" at position 4');
    expect(errorOf("2 = 2").message).toBe('Unexpected character "=" at position 2');
    expect(errorOf("1;2").message).toBe('Unexpected character ";" at position 1');
    expect(errorOf("50%%").message).toBe('Unexpected "%" at position 3');
  });

  it("treats % after a number as remainder, not percent", () => {
    expect(errorOf("50%").message).toBe("Unexpected end of expression");
    expect(ev("50 % 7")).toBe(1);
  });

  it("does not support implicit multiplication", () => {
    expect(errorOf("2pi").message).toBe('Unexpected "pi" at position 1 (implicit multiplication is not supported)');
    expect(errorOf("2(3)").message).toBe('Unexpected "(" at position 1 (implicit multiplication is not supported)');
    expect(errorOf("(2)(3)").message).toBe('Unexpected "(" at position 3 (implicit multiplication is not supported)');
    expect(errorOf("2 3").message).toBe('Unexpected "3" at position 2 (implicit multiplication is not supported)');
    expect(errorOf("pi e").message).toBe('Unexpected "e" at position 3 (implicit multiplication is not supported)');
    expect(errorOf("2 sqrt(4)").message).toMatch(/^Unexpected "sqrt" at position 2 \(implicit/);
  });

  it("rejects empty expressions", () => {
    expect(errorOf("").message).toBe("Expression is empty");
    expect(errorOf("   \n\t").message).toBe("Expression is empty");
  });

  it("rejects expressions over 1000 characters", () => {
    const ok = `${"1+".repeat(499)}1 `; // exactly 1000 characters
    expect(ok.length).toBe(1000);
    expect(ev(ok)).toBe(500);
    const tooLong = `${"1+".repeat(500)}1`;
    expect(errorOf(tooLong).message).toMatch(/^Expression is too long/);
    expect(errorOf(" ".repeat(1001)).message).toMatch(/^Expression is too long/);
  });

  it("rejects division and remainder by zero", () => {
    expect(errorOf("1 / 0").message).toBe("Division by zero at position 2");
    expect(errorOf("1 % 0").message).toMatch(/^Division by zero/);
    expect(errorOf("1 / (2 - 2)").message).toMatch(/^Division by zero/);
    expect(errorOf("1 / -0").message).toMatch(/^Division by zero/);
    expect(errorOf("0 / 0").message).toMatch(/^Division by zero/);
    expect(ev("0 / 5")).toBe(0);
  });

  it("rejects non-finite results", () => {
    for (const expr of ["sqrt(-1)", "exp(1000)", "10^400", "ln(0)", "1e308 * 10", "asin(2)", "(-8)^(1/3)"]) {
      expect(errorOf(expr).message).toBe("Result is not a finite number");
    }
    // Non-finite intermediates are fine if the final result is finite.
    expect(ev("1 / exp(1000)")).toBe(0);
  });

  it("rejects non-string input", () => {
    expect(() => ev(42 as unknown as string)).toThrow(CalculatorError);
  });

  it("limits nesting depth to 100", () => {
    expect(ev(`${"(".repeat(100)}1${")".repeat(100)}`)).toBe(1);
    expect(ev(`${"-(".repeat(100)}1${")".repeat(100)}`)).toBe(1);
    expect(ev(`${"abs(".repeat(100)}-1${")".repeat(100)}`)).toBe(1);
    expect(errorOf(`${"(".repeat(101)}1${")".repeat(101)}`).message).toBe("Parentheses nested too deeply at position 100 (limit 100)");
    expect(errorOf(`${"abs(".repeat(101)}1${")".repeat(101)}`).message).toMatch(/^Parentheses nested too deeply/);
    // Depth is about nesting, not the total number of parentheses.
    expect(ev(Array.from({ length: 150 }, () => "(1)").join("+"))).toBe(150);
    // Long unary and power chains are bounded by the length limit and do not blow the stack.
    expect(ev(`${"-".repeat(998)}1`)).toBe(1);
    expect(ev(Array.from({ length: 333 }, () => "1").join("^-"))).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Random cross-checks: build random expression trees, render them with only the parentheses the
// grammar requires, and compare the parser against a direct evaluation of the tree.
// ---------------------------------------------------------------------------------------------

type Node =
  | { kind: "num"; text: string; value: number }
  | { kind: "const"; text: string; value: number }
  | { kind: "neg"; arg: Node }
  | { kind: "bin"; op: "+" | "-" | "*" | "/" | "%" | "^" | "**"; left: Node; right: Node }
  | { kind: "call"; name: string; text: string; args: Node[] };

class DivByZero extends Error {}

const REF_FUNCTIONS: Record<string, { fn: (...xs: number[]) => number; arity: [number, number] }> = {
  abs: { fn: Math.abs, arity: [1, 1] },
  sqrt: { fn: Math.sqrt, arity: [1, 1] },
  floor: { fn: Math.floor, arity: [1, 1] },
  ceil: { fn: Math.ceil, arity: [1, 1] },
  round: { fn: Math.round, arity: [1, 1] },
  sin: { fn: Math.sin, arity: [1, 1] },
  min: { fn: Math.min, arity: [1, 3] },
  max: { fn: Math.max, arity: [1, 3] },
  hypot: { fn: Math.hypot, arity: [1, 3] },
  pow: { fn: Math.pow, arity: [2, 2] },
};

function reference(node: Node): number {
  switch (node.kind) {
    case "num":
    case "const":
      return node.value;
    case "neg":
      return -reference(node.arg);
    case "call":
      return REF_FUNCTIONS[node.name]!.fn(...node.args.map(reference));
    case "bin": {
      const a = reference(node.left);
      const b = reference(node.right);
      switch (node.op) {
        case "+":
          return a + b;
        case "-":
          return a - b;
        case "*":
          return a * b;
        case "/":
          if (b === 0) throw new DivByZero();
          return a / b;
        case "%":
          if (b === 0) throw new DivByZero();
          return a % b;
        case "^":
        case "**":
          return a ** b;
      }
    }
  }
}

// Precedence levels: 1 additive, 2 multiplicative, 3 unary minus, 4 power, 5 atom.
function precedence(node: Node): number {
  if (node.kind === "neg") return 3;
  if (node.kind !== "bin") return 5;
  if (node.op === "+" || node.op === "-") return 1;
  if (node.op === "^" || node.op === "**") return 4;
  return 2;
}

function render(node: Node, rand: () => number): string {
  const sp = () => (rand() < 0.3 ? " " : "");
  const wrap = (child: Node, min: number) => {
    const s = render(child, rand);
    return precedence(child) >= min && rand() < 0.9 ? s : `(${sp()}${s}${sp()})`;
  };
  switch (node.kind) {
    case "num":
    case "const":
      return node.text;
    case "neg":
      return `-${sp()}${wrap(node.arg, 3)}`;
    case "call":
      return `${node.text}(${node.args.map((a) => sp() + render(a, rand) + sp()).join(",")})`;
    case "bin": {
      const prec = precedence(node);
      // Left-associative levels need a tighter right operand; power is right-associative and its
      // base must be an atom (so that "-2^2" keeps meaning -(2^2)).
      const [leftMin, rightMin] = prec === 4 ? [5, 3] : [prec, prec + 1];
      return `${wrap(node.left, leftMin)}${sp()}${node.op}${sp()}${wrap(node.right, rightMin)}`;
    }
  }
}

function randomTree(rand: () => number, depth: number): Node {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const r = rand();
  if (depth <= 0 || r < 0.2) {
    if (rand() < 0.15) {
      const name = pick(["pi", "e", "tau"] as const);
      const value = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI }[name];
      return { kind: "const", text: rand() < 0.5 ? name : name.toUpperCase(), value };
    }
    const int = String(Math.floor(rand() * 20));
    const text = pick([int, `${int}.5`, `.25`, `${int}.`, `${int}e1`, `${int}.5E-1`, `0`]);
    return { kind: "num", text, value: Number(text) };
  }
  if (r < 0.3) return { kind: "neg", arg: randomTree(rand, depth - 1) };
  if (r < 0.45) {
    const name = pick(Object.keys(REF_FUNCTIONS));
    const [lo, hi] = REF_FUNCTIONS[name]!.arity;
    const count = lo + Math.floor(rand() * (hi - lo + 1));
    const args = Array.from({ length: count }, () => randomTree(rand, depth - 1));
    return { kind: "call", name, text: rand() < 0.5 ? name : name.toUpperCase(), args };
  }
  const op = pick(["+", "-", "*", "/", "%", "^", "**"] as const);
  return { kind: "bin", op, left: randomTree(rand, depth - 1), right: randomTree(rand, depth - 1) };
}

describe("random expressions match a reference evaluation", () => {
  it("agrees on 2000 random expressions", () => {
    const rand = prng(0xc0ffee);
    let finite = 0;
    for (let i = 0; i < 2000; i++) {
      const tree = randomTree(rand, 1 + Math.floor(rand() * 5));
      const expr = render(tree, rand);
      let expected: number | "div0";
      try {
        expected = reference(tree);
      } catch (err) {
        if (!(err instanceof DivByZero)) throw err;
        expected = "div0";
      }
      if (expected === "div0") {
        expect(errorOf(expr).message, expr).toMatch(/^Division by zero/);
      } else if (!Number.isFinite(expected)) {
        expect(errorOf(expr).message, expr).toBe("Result is not a finite number");
      } else {
        finite++;
        expect(ev(expr), expr).toBe(expected === 0 ? 0 : expected);
      }
    }
    expect(finite).toBeGreaterThan(1000);
  });

  it("agrees with hand-computed values", () => {
    expect(ev("2 + 3 * 4 ^ 2 / 8 - 1")).toBe(2 + (3 * 4 ** 2) / 8 - 1);
    expect(ev("-3 ^ 2 * 2 % 5")).toBe((-(3 ** 2) * 2) % 5);
    expect(ev("max(1, 2 ^ 3, -4) - min(3, sqrt(16))")).toBe(8 - 3);
    expect(ev("tau / (2 * pi) + e - E")).toBe(1);
  });
});
