// How deep a client's JSON may nest: HTTP bodies (src/routes/json-depth.ts) and WebSocket frames
// (src/session/streams/command-frames.ts) alike. A structure thousands of levels deep overflows the stack where it is
// walked, copied (the Durable Object RPC boundary, structured clone) or queried (SQLite's JSON functions). The
// depth is read from the raw text, in one pass without recursion, before anything parses it: 50,000 levels
// cost a loop, not a stack.

export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = new Set([0x5b, 0x7b]); // [ {
const CLOSE = new Set([0x5d, 0x7d]); // ] }

/**
 * Where the JSON text `text` nests deeper than `max` levels (an object or array at level `max + 1`; the value
 * itself is level 1): the top-level field it is under (`key` in an object, `[i]` in an array, "" for the value
 * itself), or null when it does not. For text that is not valid JSON the answer is a best effort, never a throw.
 */
export function deepField(text: string, max = MAX_JSON_DEPTH): string | null {
  let depth = 0;
  let inString = false;
  // At level 1: whether the container is an array, its current index, and where its current key's text starts.
  let topArray = false;
  let index = 0;
  let keyStart = -1;
  let keyEnd = -1;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        if (depth === 1 && expectKey) {
          keyEnd = i + 1;
          expectKey = false;
        }
      }
      continue;
    }
    if (c === QUOTE) {
      inString = true;
      if (depth === 1 && expectKey) keyStart = i;
    } else if (OPEN.has(c)) {
      depth++;
      if (depth > max) return depth === 1 ? "" : topField(text, topArray, index, keyStart, keyEnd);
      if (depth === 1) {
        topArray = c === 0x5b;
        expectKey = !topArray;
      }
    } else if (CLOSE.has(c)) {
      depth--;
    } else if (c === COMMA && depth === 1) {
      index++;
      expectKey = !topArray;
    } else if (c === COLON && depth === 1) {
      expectKey = false;
    }
  }
  return null;
}

function topField(text: string, topArray: boolean, index: number, keyStart: number, keyEnd: number): string {
  if (topArray) return `[${index}]`;
  if (keyStart < 0 || keyEnd <= keyStart) return "";
  try {
    const key = JSON.parse(text.slice(keyStart, keyEnd)) as unknown;
    return typeof key === "string" ? key : "";
  } catch {
    return "";
  }
}
