// A `run_code` call (docs/guides/code-mode.md) as what it is: the script the model wrote, the lines it
// logged, what it returned or the error it ended with, and the tool calls it made nested under it.
import { pretty } from "../format";
import { Items } from "./cards";
import type { ToolCall } from "./items";

interface ScriptOutput {
  result?: unknown;
  error?: unknown;
  logs?: unknown;
}

const scriptCode = (args: unknown): string =>
  args && typeof args === "object" && typeof (args as { code?: unknown }).code === "string" ? (args as { code: string }).code : pretty(args ?? null);

/** The output as run_code records it; anything else (a spilled preview, a refusal's text) is shown as is. */
function outputOf(call: ToolCall): ScriptOutput | null {
  const out = call.result;
  return out && typeof out === "object" && ("result" in out || "error" in out) ? (out as ScriptOutput) : null;
}

export function ScriptDetails({ call }: { call: ToolCall }) {
  const out = call.has_result ? outputOf(call) : null;
  const logs = Array.isArray(out?.logs) ? (out.logs as unknown[]).map(String) : [];
  return (
    <div class="script">
      <h4 class="script-label">Script</h4>
      <pre class="script-code" data-testid="script-code">
        <code>{scriptCode(call.args)}</code>
      </pre>
      {call.children.length > 0 && (
        <section class="script-calls" aria-label={`Calls made by the script (${call.children.length})`}>
          <h4 class="script-label">Calls made by the script ({call.children.length})</h4>
          <Items items={call.children} />
        </section>
      )}
      {logs.length > 0 && (
        <>
          <h4 class="script-label">Console</h4>
          <pre class="script-logs" data-testid="script-logs">
            {logs.join("\n")}
          </pre>
        </>
      )}
      {call.has_result &&
        (out && "error" in out ? <Outcome label="Error" value={out.error} tone="error" /> : <Outcome label="Result" value={out ? out.result : call.result} />)}
    </div>
  );
}

function Outcome({ label, value, tone }: { label: string; value: unknown; tone?: "error" }) {
  return (
    <>
      <h4 class="script-label">{label}</h4>
      <pre class={`script-outcome${tone ? ` ${tone}` : ""}`} data-testid="script-outcome">
        {pretty(value ?? null)}
      </pre>
    </>
  );
}
