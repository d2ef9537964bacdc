// docs/reference/websocket.md, generated from the client frames (ClientFrame, src/protocol/wire.ts), the
// reply frame (src/protocol/server-frames.ts) and the close codes (src/protocol/close-codes.ts).
import { z } from "zod";
import { CLOSE_CODES } from "../protocol/close-codes";
import { MAX_JSON_DEPTH } from "../protocol/json-nesting";
import { fields, generatedNote, type JsonSchema } from "../protocol/schema-markdown";
import { ReplyFrame } from "../protocol/server-frames";
import { ClientFrame } from "../protocol/wire";

/** What each client frame does, by type. */
const FRAME_NOTES: Record<ClientFrame["type"], string> = {
  submit_turn: "Submits a turn, as `POST /v1/sessions/:sid/turns`.",
  interrupt: "Cancels the running turn, as `POST /v1/sessions/:sid/interrupt`.",
  respond_action: "Approves or rejects a pending tool call, as `POST /v1/sessions/:sid/actions/:action_id`.",
  inject_message: "Adds a message to the running turn (or starts one), as `POST /v1/sessions/:sid/messages`.",
  ack: "On a socket opened with `?channel=<id>`: stores the channel's cursor (it never moves back). A reconnect with the same `channel` and no `after` resumes after it. Answered only when it fails or carries a `request_id`.",
};

function branches(schema: z.ZodType): JsonSchema[] {
  const json = z.toJSONSchema(schema, { unrepresentable: "any", io: "input", reused: "inline" }) as JsonSchema;
  return (json.oneOf ?? json.anyOf) as JsonSchema[];
}

export function websocketMarkdown(): string {
  const clientRows = branches(ClientFrame).map((b) => {
    const type = (b.properties!.type as JsonSchema).const as ClientFrame["type"];
    return `| \`${type}\` | ${fields(b)} | ${FRAME_NOTES[type]} |`;
  });
  const replyRows = branches(ReplyFrame).map((b) => `| \`${(b.properties!.ok as JsonSchema).const}\` | ${fields(b)} |`);
  const closeRows = Object.entries(CLOSE_CODES).map(([name, c]) => `| ${c.code} | \`${name}\` | ${c.when} | ${c.client} |`);
  return [
    "# WebSocket",
    "",
    generatedNote("src/protocol/wire.ts, src/protocol/server-frames.ts and src/protocol/close-codes.ts"),
    "",
    "`GET /v1/sessions/:sid/ws?after=N&channel=<id>` upgrades to a WebSocket (without an upgrade: 426",
    "`upgrade_required`). Browsers, which cannot set headers on a WebSocket, pass the key or token as",
    "`?access_token=`. The server first sends every event with `sequence > after`, then live events, one JSON",
    "event envelope per text frame ([events.md](events.md)), with no gap and no duplicate. With `channel` and no",
    "`after`, it starts after the channel's last ack.",
    "",
    "## Client frames",
    "",
    "Each is one JSON text frame. A frame that is not JSON or does not match gets an `ok: false` reply and the",
    "socket stays open. `request_id` (a string or a number) is echoed in the reply. Fields marked `?` may be absent.",
    `A frame nested deeper than ${MAX_JSON_DEPTH} levels, as an HTTP body may not be, is refused from its text before it is`,
    "parsed: `validation_failed` naming the top-level field, with `request_id: null`.",
    "",
    "| type | fields | does |",
    "| --- | --- | --- |",
    ...clientRows,
    "",
    "## Server frames",
    "",
    "Events, as above, and a `reply` to each command frame:",
    "",
    "| ok | fields |",
    "| --- | --- |",
    ...replyRows,
    "",
    "## Close codes",
    "",
    "Besides the standard codes, the runtime closes a socket with these:",
    "",
    "| code | name | when | the client |",
    "| --- | --- | --- | --- |",
    ...closeRows,
    "",
  ].join("\n");
}
