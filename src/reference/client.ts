// docs/reference/client.md, generated from the client's own source (src/client/http-api.ts and client.ts) with
// the TypeScript compiler's parser: every public method of RuntimeClient, its parameters and result as typed,
// the route its body calls, and the first sentence of its doc comment.
import ts from "typescript";
import { OPERATIONS } from "../protocol/operations";
import { cell, generatedNote } from "../protocol/schema-markdown";

const SOURCES = ["src/client/http-api.ts", "src/client/client.ts"];

interface Method {
  signature: string;
  route: string;
  does: string;
}

/** A source file, by its path from the repository's root (where npm runs scripts and tests). */
function source(path: string): ts.SourceFile {
  const file = ts.sys.resolvePath(path);
  const text = ts.sys.readFile(file);
  if (text === undefined) throw new Error(`cannot read ${file}`);
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
}

const isPublic = (m: ts.MethodDeclaration) =>
  !(ts.getCombinedModifierFlags(m) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) && !ts.isPrivateIdentifier(m.name);

function signature(m: ts.MethodDeclaration, file: ts.SourceFile): string {
  const params = m.parameters.map((p) => `${p.name.getText(file)}${p.questionToken || p.initializer ? "?" : ""}`).join(", ");
  return `\`${m.name.getText(file)}(${params})\` → \`${m.type?.getText(file).replace(/\s+/g, " ") ?? "void"}\``;
}

const DECLARED = new Map(OPERATIONS.map((op) => [op.operationId, op]));

/** The value a request's `params` gives each path parameter, by its name in the method's code (`{sid: sessionId}`: `sessionId`). */
function paramNames(input: ts.Expression | undefined, file: ts.SourceFile): Map<string, string> {
  const names = new Map<string, string>();
  const params =
    input && ts.isObjectLiteralExpression(input)
      ? input.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(file) === "params")?.initializer
      : undefined;
  if (!params || !ts.isObjectLiteralExpression(params)) return names;
  for (const p of params.properties) {
    if (ts.isShorthandPropertyAssignment(p)) names.set(p.name.text, p.name.text);
    else if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.initializer)) names.set(p.name.getText(file), p.initializer.text);
  }
  return names;
}

/** `this.call(turns.submitTurn, { params: { sid: sessionId } })` as `POST /v1/sessions/:sessionId/turns`, from the declaration. */
function declaredRoute(call: ts.CallExpression, file: ts.SourceFile): string | undefined {
  const [op, input] = call.arguments;
  if (!op || !ts.isPropertyAccessExpression(op)) return undefined;
  const declared = DECLARED.get(op.name.text);
  if (!declared) throw new Error(`${op.getText(file)} is not a declared operation`);
  const names = paramNames(input, file);
  return `${declared.method.toUpperCase()} ${declared.path.replace(/\{(\w+)\}/g, (_, name: string) => `:${names.get(name) ?? name}`)}`;
}

/** The route the method calls (`this.call` / `this.request`), or the public methods it is built on. */
function route(m: ts.MethodDeclaration, file: ts.SourceFile, publicNames: Set<string>): string {
  const routes: string[] = [];
  const uses: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.expression.kind === ts.SyntaxKind.ThisKeyword) {
      const callee = node.expression.name.text;
      const declared = callee === "call" || callee === "request" ? declaredRoute(node, file) : undefined;
      if (declared) routes.push(`\`${declared}\``);
      else if (publicNames.has(callee)) uses.push(`\`${callee}()\``);
    }
    ts.forEachChild(node, visit);
  };
  if (m.body) visit(m.body);
  if (routes.length > 0) return [...new Set(routes)].join(", ");
  return uses.length > 0 ? `over ${[...new Set(uses)].join(", ")}` : "";
}

/** The doc comment's first sentence, without the route it may start with (the route column has it). */
function does(m: ts.MethodDeclaration): string {
  const doc = ts
    .getJSDocCommentsAndTags(m)
    .filter(ts.isJSDoc)
    .map((d) => ts.getTextOfJSDocComment(d.comment) ?? "")
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  const text = doc.replace(/^`[A-Z]+ [^`]*`[:;]\s*/, "");
  return text.match(/^.*?\.(?=\s|$)/)?.[0] ?? text;
}

export function clientMethods(): Method[] {
  const declared = SOURCES.flatMap((path) => {
    const file = source(path);
    return file.statements
      .filter(ts.isClassDeclaration)
      .filter((cls) => cls.name && ["HttpApi", "RuntimeClient"].includes(cls.name.text))
      .flatMap((cls) => cls.members.filter(ts.isMethodDeclaration).filter(isPublic))
      .map((m) => ({ m, file }));
  });
  const publicNames = new Set(declared.map(({ m, file }) => m.name.getText(file)));
  return declared.map(({ m, file }) => ({ signature: signature(m, file), route: route(m, file, publicNames), does: does(m) }));
}

export function clientMarkdown(): string {
  return [
    "# Client methods",
    "",
    generatedNote(SOURCES.join(" and ")),
    "",
    "Every public method of `RuntimeClient` (`agent-runtime/client`), in the order of its source: its parameters",
    "(`?`: optional) and result as typed, the route it calls (or the methods it is built on) and what its doc",
    "comment says. How to use it, `events()` and `submitAndWait` in detail: [the client and the CLI](../client.md).",
    "",
    "| method | route | does |",
    "| --- | --- | --- |",
    ...clientMethods().map((m) => `| ${cell(m.signature)} | ${cell(m.route)} | ${cell(m.does)} |`),
    "",
  ].join("\n");
}
