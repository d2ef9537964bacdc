// Scheduled turns (POST/GET/DELETE /v1/sessions/:sid/schedules): the request body and the listed schedule.
import { z } from "zod";
import { TurnInput } from "./wire";

export const CreateScheduleBody = z
  .strictObject({
    input: TurnInput,
    at: z.string().max(100).optional().describe("ISO 8601 timestamp with an offset: one run at that time"),
    every_s: z.number().optional().describe("a run every this many seconds (at least 60), the first one interval from now"),
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
    at: z.number().optional().describe("milliseconds since the epoch"),
    every_s: z.number().optional(),
    cron: z.string().optional(),
    timezone: z.string().optional(),
    idempotency_key: z.string().nullable(),
    next_run_at: z.number().describe("milliseconds since the epoch"),
    created_at: z.number(),
  })
  .meta({ id: "Schedule" });
export type Schedule = z.infer<typeof ScheduleSchema>;
