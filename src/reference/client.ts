// docs/reference/client.md, generated from the client's own source (src/client/http-api.ts and client.ts) with
// the TypeScript compiler's parser: every public method of RuntimeClient, its parameters and result as typed,
// the route its body calls, and the first sentence of its doc comment.
import ts from "typescript";
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

/** `${enc(sessionId)}` as `:sessionId`; a query string built in code is left out. */
function path(arg: ts.Expression, file: ts.SourceFile): string {
  const text = ts.isStringLiteralLike(arg) ? arg.text : arg.getText(file).slice(1, -1);
  return text
    .replace(/\$\{enc\((\w+)\)\}/g, ":$1")
    .replace(/\?.*$|\$\{.*$/, "")
    .replace(/\/+$/, "");
}

/** The route the method calls (`this.json` / `this.request`), or the public methods it is built on. */
function route(m: ts.MethodDeclaration, file: ts.SourceFile, publicNames: Set<string>): string {
  const routes: string[] = [];
  const uses: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.expression.kind === ts.SyntaxKind.ThisKeyword) {
      const callee = node.expression.name.text;
      const [verb, target] = node.arguments;
      if ((callee === "json" || callee === "request") && verb && ts.isStringLiteral(verb) && target) routes.push(`\`${verb.text} ${path(target, file)}\``);
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
