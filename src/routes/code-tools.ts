// Code tool routes (docs/guides/code-tools.md): a source is loaded in a Dynamic Worker before it is stored, so
// one that does not parse, throws while loading or has no default function is refused naming where.
import { BUILTIN_TOOLS } from "../engine/tools/builtins";
import { HANDOFF_PREFIX } from "../engine/tools/handoff";
import { registry } from "../objects/registry/registry-object";
import { type CodeToolVersion, codeToolView } from "../protocol/code-tools";
import { ApiError } from "../protocol/errors";
import { codeTools as ops } from "../protocol/operations";
import { sourceProblem } from "../sandbox/dynamic-worker";
import { router } from "./http";
import { route } from "./operation-route";

export const codeTools = router()
  .openapi(route(ops.putCodeTool), async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    if (BUILTIN_TOOLS.has(name) || name.startsWith(HANDOFF_PREFIX))
      throw ApiError.validation([{ path: "name", reason: `"${name}" clashes with a built-in tool` }]);
    // The deployment's own tool of the name would always win: the code tool could never run.
    if (c.get("tools").has(name)) throw ApiError.validation([{ path: "name", reason: `"${name}" is an in-process tool of this deployment` }]);
    if (!c.env.LOADER) throw new ApiError("conflict", "This deployment has no LOADER binding ([[worker_loaders]] in wrangler.toml): code tools cannot run");
    const problem = await sourceProblem(c.env, body.source);
    if (problem) throw ApiError.validation([{ path: "source", reason: problem }]);
    const { created, tool } = (await registry(c.env).putCodeTool(name, body)) as { created: boolean; tool: CodeToolVersion };
    return c.json(codeToolView(tool), created ? 201 : 200);
  })
  .openapi(route(ops.getCodeTool), async (c) => {
    const { name } = c.req.valid("param");
    const { version } = c.req.valid("query");
    const tool = (await registry(c.env).codeTool(name, version === undefined ? undefined : Number(version))) as CodeToolVersion | null;
    if (!tool) throw ApiError.notFound("Code tool", version ? `${name}@${version}` : name);
    return c.json(codeToolView(tool), 200);
  })
  .openapi(route(ops.listCodeTools), async (c) => {
    const list = (await registry(c.env).listCodeTools()) as CodeToolVersion[];
    return c.json({ code_tools: list.map(codeToolView) }, 200);
  })
  .openapi(route(ops.deleteCodeTool), async (c) => {
    const { name } = c.req.valid("param");
    if (!(await registry(c.env).removeCodeTool(name))) throw ApiError.notFound("Code tool", name);
    return c.json({ deleted: true, name }, 200);
  });
