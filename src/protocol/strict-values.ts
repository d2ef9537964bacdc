// Numbers and times a client writes as text (query parameters, cursors, a schedule's `at`), read one way only.
// An integer is plain decimal digits ("17", and "-17" where negatives are allowed): never "1e2", "+5", "0x5",
// " 5", "5.0" or "017", which Number() and z.coerce would read as some number. A time is a real calendar date in
// ISO 8601 form (2026-02-30 and 2026-13-01 are refused, where Date.parse reads the first as March 2), or
// milliseconds since the epoch. Everything that reads such a value goes through here.
import { z } from "zod";
import { ApiError } from "./errors";

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface IntRange {
  min: number;
  max: number;
}

/** Plain decimal digits, no leading zero (but "0"), an optional "-" (not "-0"); 16 digits keep it a safe integer. */
const INTEGER = /^(?:0|-?[1-9][0-9]{0,15})$/;

const rangeText = ({ min, max }: IntRange) => (max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`);

/** An integer written as plain decimal digits (a leading "-" only when `min` is negative), within the range. */
export function parseInteger(raw: string, range: IntRange): Parsed<number> {
  const reason = `must be an integer ${rangeText(range)}, written as plain decimal digits`;
  if (!INTEGER.test(raw) || (range.min >= 0 && raw.startsWith("-"))) return { ok: false, reason };
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) return { ok: false, reason };
  return { ok: true, value };
}

/** The largest time a Date holds (±8.64e15 ms around the epoch). */
const MAX_TIME_MS = 8.64e15;

/**
 * YYYY-MM-DD, optionally followed by THH:MM, :SS, a fraction of a second and a UTC offset (Z or ±HH:MM). T and Z in
 * either case. The fields are checked below: the pattern only cuts the text into them.
 */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

export interface TimeForm {
  /** Whether a bare date (YYYY-MM-DD, midnight UTC) is accepted. */
  date: boolean;
  /** Whether a date and time must carry its UTC offset (without one it is read as UTC). */
  offset: boolean;
  /** Whether plain digits are accepted as milliseconds since the epoch. */
  ms: boolean;
}

/** The form a time parameter of the index takes: ISO 8601 (a date, or a date and time, UTC unless it says) or ms. */
export const QUERY_TIME: TimeForm = { date: true, offset: false, ms: true };
/** A timestamp that must say its offset, or it would depend on the server's zone (a schedule's `at`). */
export const TIMESTAMP_WITH_OFFSET: TimeForm = { date: false, offset: true, ms: false };

function formText(form: TimeForm): string {
  const iso = form.offset ? "an ISO 8601 timestamp with a UTC offset (Z or ±hh:mm)" : `an ISO 8601 ${form.date ? "date (YYYY-MM-DD) or " : ""}date and time`;
  return form.ms ? `${iso} or milliseconds since the epoch` : iso;
}

/** A time as ms since the epoch: a real calendar date and a real time of day, within the range of a Date. */
export function parseTime(raw: string, form: TimeForm): Parsed<number> {
  const bad = (why: string): Parsed<number> => ({ ok: false, reason: `must be ${formText(form)}${why}` });
  if (form.ms && /^-?\d+$/.test(raw)) {
    const ms = parseInteger(raw, { min: -MAX_TIME_MS, max: MAX_TIME_MS });
    return ms.ok ? ms : bad(` (milliseconds from ${-MAX_TIME_MS} to ${MAX_TIME_MS})`);
  }
  const m = ISO_TIME.exec(raw);
  if (!m) return bad("");
  const [year, month, day, hour = 0, minute = 0, second = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((f) => (f === undefined ? undefined : Number(f)));
  const fraction = m[7];
  const offset = m[8];
  if (m[4] === undefined && !form.date) return bad(" (a date alone has no time)");
  if (m[4] !== undefined && offset === undefined && form.offset) return bad(" (it has none)");
  if (month! < 1 || month! > 12) return bad(` (there is no month ${m[2]})`);
  if (day! < 1 || day! > daysIn(year!, month!)) return bad(` (${m[1]}-${m[2]} has no day ${m[3]})`);
  if (hour > 23 || minute > 59 || second > 59) return bad(` (${m[4]}:${m[5]}${m[6] === undefined ? "" : `:${m[6]}`} is not a time of day)`);
  let offsetMin = 0;
  if (offset !== undefined && offset.toUpperCase() !== "Z") {
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) return bad(` (${offset} is not a UTC offset)`);
    offsetMin = (offset[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!); // not Date.UTC, which reads the years 0-99 as 1900-1999
  date.setUTCHours(hour, minute, second, fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000));
  const ms = date.getTime() - offsetMin * 60_000;
  if (Number.isNaN(ms) || Math.abs(ms) > MAX_TIME_MS) return bad(" (outside the range of a date)");
  return { ok: true, value: ms };
}

/** The value, or a 422 naming `name` with the reason. */
function orRefuse<T>(name: string, parsed: Parsed<T>): T {
  if (!parsed.ok) throw ApiError.validation([{ path: name, reason: parsed.reason }]);
  return parsed.value;
}

/** An integer query parameter (`fallback` when absent), else 422 naming it. */
export function intParam(name: string, raw: string | undefined, range: IntRange, fallback: number): number;
export function intParam(name: string, raw: string, range: IntRange): number;
export function intParam(name: string, raw: string | undefined, range: IntRange, fallback?: number): number {
  if (raw === undefined) return fallback!;
  return orRefuse(name, parseInteger(raw, range));
}

/** A time parameter, as ms since the epoch, else 422 naming it. */
export function timeParam(name: string, raw: string, form: TimeForm = QUERY_TIME): number {
  return orRefuse(name, parseTime(raw, form));
}

/**
 * An integer query parameter in an operation's declaration: a string (as it comes) that must be plain decimal
 * digits in the range, read as the number. Not z.coerce.number(), which takes "1e2", "+5", "0x5" and " 5 ".
 */
export function intQuery(range: IntRange) {
  return z.string().transform((raw, ctx) => {
    const parsed = parseInteger(raw, range);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: "custom", message: parsed.reason });
    return z.NEVER;
  });
}
