// The request fingerprint computed the plain way, as logs recorded before the incremental one have it: the
// SHA-256 of the whole canonical request at once, nothing kept between calls.

import { createHash } from "node:crypto";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { canonicalJson } from "../../../src/engine/request-fingerprint";

export function wholeRequestHash(
  model: string,
  { prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat }: LanguageModelV3CallOptions,
): string {
  const text = canonicalJson({ model, prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat });
  return createHash("sha256").update(text).digest("hex");
}
