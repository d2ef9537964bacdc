// What a turn runs with: the agent's model and tools (its MCP servers' tools discovered first), the thread
// history, and the session's orchestration limits.
import type { ModelMessage } from "ai";
import { budgetMaxima } from "../../engine/budget-limits";
import type { TurnSetup } from "../../engine/loop";
import { recalledPrompt, withinBudget } from "../../engine/memory/auto-recall";
import { type Json, loadedWorkingMemory, workingMemoryPrompt } from "../../engine/memory/working-memory";
import { providerKeys, resolveModel } from "../../engine/models";
import { parsePriceOverrides } from "../../engine/pricing";
import { withRunCode } from "../../engine/tools/code-mode";
import { discoverMcpTools, McpConnections, type McpDiscovery } from "../../engine/tools/mcp-client";
import { describeTool, resolveToolbelt } from "../../engine/tools/toolbelt";
import { parseAllowlist } from "../../engine/url-allowlist";
import type { AgentConfig } from "../../protocol/agent-config";
import { errorMessage } from "../../protocol/errors";
import type { EventDraft, RuntimeEvent } from "../../protocol/events";
import type { MemoryLoaded, MemoryRecalled } from "../../protocol/memory";
import { providerEnv } from "../../providers";
import { scriptRunner } from "../../sandbox/script-runner";
import type { LogHost, SettingsHost, TurnsHost } from "../hosts";
import { recallFor, recordedOnce, withDocument, workingMemoryFor } from "../memory/session-memory";
import { type Discovery, discoverCodeTools } from "./code-tool-discovery";
import { orchestrationLimits } from "./orchestration-steps";

/** The working memory read for a turn: its prompt section (null: none) and what to record (memory.loaded, or a warning). */
export type WorkingMemoryRead = { section: string | null; drafts: EventDraft[] };
const NO_MEMORY: WorkingMemoryRead = { section: null, drafts: [] };
/** A turn's automatic recall: its prompt section (null: none) and what to record (memory.recalled, or a warning). */
export type RecallRead = { section: string | null; drafts: EventDraft[] };
const NO_RECALL: RecallRead = { section: null, drafts: [] };

/** What setting up turns uses of the session: its agent and settings, the history and the turn's events. */
export type SetupSession = LogHost & TurnsHost & SettingsHost;

export class TurnSetups {
  /** Clients of the agent's MCP servers, kept between turns (tool listings are cached for a short while). */
  private mcp: McpConnections | null = null;
  /** The thread history, loaded on first use and kept in step with what turns append. */
  private history: ModelMessage[] | null = null;

  constructor(private readonly s: SetupSession) {}

  setupFor(
    config: AgentConfig,
    mcp: Discovery,
    memory: WorkingMemoryRead = NO_MEMORY,
    recalled: string | null = null,
    version = this.s.view().agent_version ?? null, // a handoff's: the version handed to
  ): TurnSetup {
    const providers = providerEnv(this.s.bindings());
    this.history ??= this.s.store.history();
    return {
      config,
      agent_version: version,
      model: resolveModel(config.model, providers),
      tools: this.toolbelt(config, mcp),
      ...(config.code_mode ? { runScript: scriptRunner(this.s.bindings()) } : {}),
      history: this.history,
      resolveModel: (spec) => resolveModel(spec, providers),
      orchestration: { ...orchestrationLimits(this.s.bindings()), depth: this.s.row().orchestration_depth },
      prices: parsePriceOverrides(this.s.bindings().MODEL_PRICES),
      budgetMaxima: budgetMaxima(this.s.bindings()),
      cacheKey: this.s.row().session_id,
      secrets: providerKeys(providers),
      ...(memory.section ? { working_memory: memory.section } : {}),
      ...(recalled ? { recalled } : {}),
    };
  }

  /**
   * `config` as turn `turnId` runs it: a turn submitted by POST /v1/responses with max_output_tokens has each
   * model call capped at it (the agent's own max_tokens when lower). The session's agent is left as it is.
   */
  capped(config: AgentConfig, turnId: string): AgentConfig {
    const submitted = this.s.store.eventsOfTurn(turnId).find((e) => e.type === "turn.submitted");
    const cap = submitted?.type === "turn.submitted" ? submitted.payload.responses_request?.max_output_tokens : undefined;
    return cap === undefined ? config : { ...config, max_tokens: Math.min(config.max_tokens ?? cap, cap) };
  }

  /**
   * The tools known only when a turn starts: its MCP servers' and its code tools' latest versions. Never fails:
   * an unreachable server, or a code tool that is gone or unreadable, becomes a warning.
   */
  async discover(config: AgentConfig): Promise<Discovery> {
    const [mcp, code] = await Promise.all([this.discoverMcp(config), discoverCodeTools(this.s.bindings(), config, this.s.inProcessTools())]);
    return { tools: [...mcp.tools, ...code.tools], warnings: [...mcp.warnings, ...code.warnings] };
  }

  private async discoverMcp(config: AgentConfig): Promise<McpDiscovery> {
    if (config.mcp_servers.length === 0) return { tools: [], warnings: [] };
    this.mcp ??= new McpConnections({ fetch: (input, init) => fetch(input, init), urlAllowlist: parseAllowlist(this.s.bindings().TOOL_URL_ALLOWLIST) });
    return discoverMcpTools(config, this.mcp);
  }

  /** The session agent's tools as GET .../tools lists them. */
  async inventory(): Promise<ReturnType<typeof describeTool>[]> {
    const config = this.s.agent();
    const mcp = await this.discover(config);
    return [...this.toolbelt(config, mcp).values()].map(describeTool);
  }

  /** The agent's tools under the session's policy, with run_code over them in code mode. */
  private toolbelt(config: AgentConfig, mcp: Discovery) {
    const tools = resolveToolbelt(config, this.s.policy(), mcp.tools, this.s.inProcessTools());
    return config.code_mode ? withRunCode(tools) : tools;
  }

  /**
   * The working memory `turnId` shows a turn of `config`: the resource's document, read and recorded
   * (memory.loaded). With `keep` (the turn's start), a resumed turn keeps the document it recorded; a replayed
   * one takes the `recorded` turn's (one per read, in order: the start, then each handoff) and reads nothing (a
   * replay must not depend on the resource's memory now). Never fails: a memory object that does not answer is
   * a warning and the turn runs without it. `earlier`: the turn's events so far.
   */
  async workingMemory(
    config: AgentConfig,
    turnId: string,
    keep: boolean,
    recorded: readonly MemoryLoaded[],
    earlier: readonly RuntimeEvent[] = this.s.store.eventsOfTurn(turnId),
  ): Promise<WorkingMemoryRead> {
    const shown = loadedWorkingMemory(earlier);
    const section = (m: MemoryLoaded) => workingMemoryPrompt(withDocument(this.s.store, m).document as Json, config.tools.includes("update_working_memory"));
    const kept = keep ? shown.at(-1) : undefined;
    const replayed = recorded[shown.length];
    try {
      if (kept) return { section: section(kept), drafts: [] };
      // A replay's recording holds each document (replay-source.ts); it is recorded here once again, like any other.
      const loaded = replayed ? { ...withDocument(this.s.store, replayed), resource_id: null, replayed: true } : await workingMemoryFor(this.s, config);
      if (!loaded) return NO_MEMORY;
      return { section: section(loaded), drafts: [{ type: "memory.loaded", turn_id: turnId, payload: recordedOnce(this.s.store, loaded) }] };
    } catch (err) {
      const message = `The working memory could not be read; the turn runs without it: ${errorMessage(err)}`;
      return { section: null, drafts: [{ type: "runtime.warning", turn_id: turnId, payload: { code: "working_memory_unavailable", message } }] };
    }
  }

  /**
   * Automatic recall (memory.recall.auto) for `turnId`: the resource's other sessions searched with the turn's
   * input. A resumed turn keeps the hits it recorded; a replayed one takes the `recorded` turn's and searches
   * nothing (a replay must not depend on the resource's memory now). Never fails: a search that does not answer
   * is a warning and the turn runs without recall. `earlier`: the turn's events so far.
   */
  async recall(config: AgentConfig, turnId: string, recorded: MemoryRecalled | null, earlier: readonly RuntimeEvent[]): Promise<RecallRead> {
    const before = earlier.find((e) => e.type === "memory.recalled");
    if (before?.type === "memory.recalled") return { section: recalledPrompt(before.payload.hits), drafts: [] };
    const auto = config.memory?.recall?.auto;
    if (!auto) return NO_RECALL;
    const query = this.s.store.turn(turnId)?.input ?? "";
    try {
      const found = recorded ? { resource_id: null, hits: recorded.hits } : await recallFor(this.s, query, auto.top_k);
      if (!found) return NO_RECALL;
      const { hits, tokens } = withinBudget(found.hits, auto.top_k, auto.max_tokens);
      const payload: MemoryRecalled = { resource_id: found.resource_id, query, hits, tokens, ...(recorded ? { replayed: true } : {}) };
      return { section: recalledPrompt(hits), drafts: [{ type: "memory.recalled", turn_id: turnId, payload }] };
    } catch (err) {
      const message = `Earlier conversations could not be searched; the turn runs without them: ${errorMessage(err)}`;
      return { section: null, drafts: [{ type: "runtime.warning", turn_id: turnId, payload: { code: "recall_unavailable", message } }] };
    }
  }

  /** A runtime.warning per MCP server or tool that discovery had to leave out, and what the working memory read records. */
  warnings(turnId: string, mcp: Discovery, memory: WorkingMemoryRead = NO_MEMORY): EventDraft[] {
    const drafts: EventDraft[] = mcp.warnings.map((w) => ({
      type: "runtime.warning",
      turn_id: turnId,
      payload: { code: w.code, ...(w.server ? { server: w.server } : {}), message: w.message },
    }));
    return [...drafts, ...memory.drafts];
  }

  catalogEvent(turnId: string, setup: TurnSetup): EventDraft {
    return { type: "tool.catalog.resolved", turn_id: turnId, payload: { tools: [...setup.tools.values()].map(describeTool) } };
  }

  /** Messages a finished turn appended to the history. */
  remember(messages: ModelMessage[]): void {
    this.history?.push(...messages);
  }

  /** The history was replaced (compaction). */
  replaced(history: ModelMessage[]): void {
    this.history = history;
  }
}
