// The opaque cursor of a keyset page: the last row's (time, id), base64url JSON. A cursor this route did not
// return is 422 naming `cursor`.
import { ApiError } from "../protocol/errors";

export function encodeCursor(at: number, id: string): string {
  return btoa(JSON.stringify([at, id]))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replaceAll("=", "");
}

export function decodeCursor(raw: string): [number, string] {
  try {
    const value = JSON.parse(atob(raw.replaceAll("-", "+").replaceAll("_", "/"))) as unknown;
    if (Array.isArray(value) && value.length === 2 && Number.isInteger(value[0]) && typeof value[1] === "string") return value as [number, string];
  } catch {
    // reported below
  }
  throw ApiError.validation([{ path: "cursor", reason: "is not a cursor this route returned" }]);
}

/** A `limit` query parameter: an integer from 1 to `max` (`fallback` when absent), else 422 naming it. */
export function pageLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (!/^\d+$/.test(raw) || limit < 1 || limit > max) throw ApiError.validation([{ path: "limit", reason: `must be an integer from 1 to ${max}` }]);
  return limit;
}
