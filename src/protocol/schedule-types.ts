// Scheduled turns (POST/GET/DELETE /v1/sessions/:sid/schedules): the request body and the listed schedule.
import { z } from "zod";
import { TurnInput } from "./wire";

export const CreateScheduleBody = z
  .strictObject({
    input: TurnInput,
    at: z.string().max(100).optional().describe("ISO 8601 timestamp with a UTC offset (Z or ±hh:mm), at most 10 years ahead: one run at that time"),
    every_s: z.number().optional().describe("a run every this many seconds (60 to 31622400, 366 days), the first one interval from now"),
    cron: z.string().max(200).optional().describe("five-field cron expression (minute hour day month weekday)"),
    timezone: z.string().max(100).optional().describe("IANA time zone the cron expression is read in (default UTC)"),
    idempotency_key: z.string().min(1).max(200).optional(),
  })
  .meta({ id: "CreateSchedule" });
export type CreateScheduleBody = z.infer<typeof CreateScheduleBody>;

export const ScheduleSchema = z
  .object({
    schedule_id: z.string(),
    input: z.string(),
    at: z.number().optional().describe("the requested time, as milliseconds since the epoch like every time on the wire"),
    every_s: z.number().optional(),
    cron: z.string().optional(),
    timezone: z.string().optional(),
    idempotency_key: z.string().nullable(),
    next_run_at: z.number().describe("milliseconds since the epoch"),
    created_at: z.number(),
  })
  .meta({ id: "Schedule" });
export type Schedule = z.infer<typeof ScheduleSchema>;
