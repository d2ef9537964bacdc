// When a schedule runs: a one-off time, a fixed interval, or a five-field cron expression (parsed by croner)
// in an IANA time zone. Runs missed while nobody was there collapse into one: the next run is always the
// first slot after "now", never a backlog of past slots.
import { Cron } from "croner";
import { ApiError } from "../../protocol/errors";
import { TIMESTAMP_WITH_OFFSET, timeParam } from "../../protocol/strict-values";

/** Intervals shorter than this are refused: a schedule is not a busy loop. */
export const MIN_EVERY_S = 60;
/** Intervals longer than this (366 days) are refused: every run stays a time a Date can hold (a yearly run is a cron). */
export const MAX_EVERY_S = 366 * 24 * 3600;
/** A one-off time at most this far ahead (10 years). */
export const MAX_AT_AHEAD_MS = 3653 * 24 * 3600 * 1000;

export type ScheduleSpec = { at: number } | { every_s: number } | { cron: string; timezone: string };

export interface ScheduleRequest {
  at?: string;
  every_s?: number;
  cron?: string;
  timezone?: string;
}

/** Checks a request against `now`; returns its spec and first run, or throws a 422 naming the field. */
export function parseSchedule(req: ScheduleRequest, now: number): { spec: ScheduleSpec; first: number } {
  const given = (["at", "every_s", "cron"] as const).filter((k) => req[k] !== undefined);
  if (given.length !== 1) {
    throw ApiError.validation([{ path: given[1] ?? "at", reason: "exactly one of at, every_s and cron is required" }]);
  }
  if (req.timezone !== undefined && req.cron === undefined) {
    throw ApiError.validation([{ path: "timezone", reason: "applies to cron only (at carries its own offset)" }]);
  }
  if (req.at !== undefined) {
    // ISO 8601 / RFC 3339 with a UTC offset (without one, the time would depend on the server's zone), a real date.
    const at = timeParam("at", req.at, TIMESTAMP_WITH_OFFSET);
    if (at <= now) throw ApiError.validation([{ path: "at", reason: "is in the past" }]);
    if (at > now + MAX_AT_AHEAD_MS) throw ApiError.validation([{ path: "at", reason: "is more than 10 years ahead" }]);
    return { spec: { at }, first: at };
  }
  if (req.every_s !== undefined) {
    if (!Number.isInteger(req.every_s) || req.every_s < MIN_EVERY_S || req.every_s > MAX_EVERY_S) {
      throw ApiError.validation([{ path: "every_s", reason: `must be a whole number of seconds from ${MIN_EVERY_S} to ${MAX_EVERY_S} (366 days)` }]);
    }
    return { spec: { every_s: req.every_s }, first: now + req.every_s * 1000 };
  }
  const spec = { cron: req.cron as string, timezone: req.timezone ?? "UTC" };
  if (!validTimeZone(spec.timezone)) throw ApiError.validation([{ path: "timezone", reason: "is not an IANA time zone" }]);
  let first: number | null;
  try {
    first = cronAfter(spec, now);
  } catch (err) {
    throw ApiError.validation([{ path: "cron", reason: `is not a five-field cron expression (${(err as Error).message})` }]);
  }
  if (first === null) throw ApiError.validation([{ path: "cron", reason: "never matches a date" }]);
  return { spec, first };
}

/** The run after the one due at `due`, seen at `now`; null when the schedule is done (a one-off time). */
export function nextRun(spec: ScheduleSpec, due: number, now: number): number | null {
  if ("at" in spec) return null;
  if ("every_s" in spec) {
    // Keeps the phase of the interval and skips every slot that passed meanwhile.
    const step = spec.every_s * 1000;
    return due + (Math.floor((now - due) / step) + 1) * step;
  }
  return cronAfter(spec, now);
}

function cronAfter(spec: { cron: string; timezone: string }, after: number): number | null {
  const next = new Cron(spec.cron, { paused: true, mode: "5-part", timezone: spec.timezone }).nextRun(new Date(after));
  return next ? next.getTime() : null;
}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
