// docs/reference/errors.md, generated from the table of error codes (ERROR_CODES in src/protocol/errors.ts).

import { ERROR_CODES } from "../protocol/errors";
import { cell, generatedNote } from "../protocol/schema-markdown";

export function errorsMarkdown(): string {
  const rows = Object.entries(ERROR_CODES)
    .sort(([, a], [, b]) => a.status - b.status)
    .map(([code, { status, meaning }]) => `| \`${code}\` | ${status} | ${cell(meaning)} |`);
  return [
    "# Error codes",
    "",
    generatedNote("src/protocol/errors.ts"),
    "",
    'Every error is the JSON envelope `{"error": {"code", "message", "details?"}}` with the HTTP status below; a',
    "WebSocket command frame gets the same `code` and `message` in an `ok: false` reply. A rejected request changes",
    "nothing. `message` is a sentence for people; program against `code`.",
    "",
    "| code | status | meaning |",
    "| --- | --- | --- |",
    ...rows,
    "",
    "Failures inside a turn are not HTTP errors: they are events in the session's log (`turn.failed` with an",
    "`error {code, message}`, `runtime.warning`, `runtime.error`), listed in [events.md](events.md).",
    "",
  ].join("\n");
}
