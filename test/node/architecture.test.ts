// The house's rules, read from the source's imports (docs/architecture.md): imports point down (the engine,
// the folds and the protocol know nothing of Cloudflare's objects or the routes), the session is a house of
// capability folders with no circle among them and none importing the object, its core or the list that
// connects them, and no source file is longer than 350 lines.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith(".ts") ? [relative(ROOT, join(dir, d.name))] : [],
  );
}

const FILES = sources(SRC);
const IMPORT = /(?:^|\n)\s*(?:import|export)[^;]*?from\s*"(\.{1,2}\/[^"]+)"/g;

/** Each file's relative imports, resolved to repository paths (without extension). */
const IMPORTS = new Map(
  FILES.map((f) => [f, [...readFileSync(join(ROOT, f), "utf8").matchAll(IMPORT)].map((m) => normalize(join(dirname(f), m[1]!)).replace(/\.ts$/, ""))]),
);

/** The unit a file belongs to: a folder of src/session or src/objects, or else src's top folder or file. */
function unit(path: string): string {
  const parts = path.replace(/\.ts$/, "").split("/");
  if ((parts[1] === "session" || parts[1] === "objects") && parts.length > 3) return `${parts[1]}/${parts[2]}`;
  if (parts[1] === "session") return `session/${parts[2]}`;
  return parts.length > 2 ? parts[1]! : parts[1]!;
}

/** Unit-level edges: who imports whom. */
function edges(): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  for (const [file, targets] of IMPORTS) {
    for (const t of targets) {
      const [a, b] = [unit(file), unit(t)];
      if (a !== b) g.set(a, (g.get(a) ?? new Set()).add(b));
    }
  }
  return g;
}

function circles(g: Map<string, Set<string>>, within: (u: string) => boolean): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (u: string) => {
    state.set(u, "open");
    path.push(u);
    for (const v of g.get(u) ?? []) {
      if (!within(v)) continue;
      if (state.get(v) === "open") found.push([...path.slice(path.indexOf(v)), v]);
      else if (!state.has(v)) visit(v);
    }
    path.pop();
    state.set(u, "done");
  };
  for (const u of g.keys()) if (within(u) && !state.has(u)) visit(u);
  return found;
}

describe("the source's structure", () => {
  const g = edges();
  const importsOf = (u: string) => [...(g.get(u) ?? [])];

  it("points down: protocol, views and the engine import nothing of the session, the objects or the routes", () => {
    const high = (u: string) => /^(session|objects|routes|worker|env)/.test(u);
    expect(importsOf("protocol").filter((u) => u !== "protocol")).toEqual([]);
    expect(importsOf("views").filter((u) => u !== "protocol")).toEqual([]);
    expect(importsOf("engine").filter(high)).toEqual([]);
    expect(importsOf("client").filter((u) => !["protocol", "views"].includes(u))).toEqual([]);
    expect([...g.keys()].filter((u) => u.startsWith("objects/")).flatMap((u) => importsOf(u).filter((v) => v.startsWith("session") || v === "routes"))).toEqual(
      [],
    );
  });

  it("keeps the session a house of capability folders: no circle, none importing the object, its core or their list", () => {
    const session = (u: string) => u.startsWith("session/");
    expect(circles(g, session)).toEqual([]);
    const top = ["session/object", "session/core", "session/capabilities"];
    const folders = [...g.keys()].filter((u) => session(u) && FILES.some((f) => f.startsWith(`src/${u}/`)));
    expect(folders.length).toBeGreaterThan(10);
    expect(
      folders.flatMap((u) =>
        importsOf(u)
          .filter((v) => top.includes(v))
          .map((v) => `${u} -> ${v}`),
      ),
    ).toEqual([]);
    // The core knows the capabilities only through the list that connects them.
    expect(importsOf("session/core").filter((v) => folders.includes(v) && !["session/store", "session/streams", "session/files"].includes(v))).toEqual([]);
  });

  it("has no source file over 350 lines", () => {
    const long = FILES.map((f) => [f, readFileSync(join(ROOT, f), "utf8").split("\n").length - 1] as const).filter(([, n]) => n > 350);
    expect(long).toEqual([]);
  });
});
