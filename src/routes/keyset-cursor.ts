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
