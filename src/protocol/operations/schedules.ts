// Scheduled turns of a session: create, list, delete (the session object validates times and runs them).
import { z } from "zod";
import { CreateScheduleBody, ScheduleSchema } from "../schedule-types";
import { json, jsonBody, operation, Sid, sidWith } from "./operation";

export const createSchedule = operation({
  method: "post",
  path: "/v1/sessions/{sid}/schedules",
  operationId: "createSchedule",
  summary: "Schedule a turn: once (at), every every_s seconds, or on a cron expression in a time zone",
  permission: "session.schedule",
  rateLimit: "request",
  params: Sid,
  body: jsonBody(CreateScheduleBody),
  responses: {
    201: json(
      ScheduleSchema.extend({ duplicate: z.boolean().optional() }),
      "Created (or the schedule an earlier request with the same idempotency_key created)",
    ),
  },
  errors: [404, 409, 422],
  session: true,
});

export const listSchedules = operation({
  method: "get",
  path: "/v1/sessions/{sid}/schedules",
  operationId: "listSchedules",
  summary: "The session's schedules, the next due first",
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  responses: { 200: json(z.object({ schedules: z.array(ScheduleSchema) }), "Schedules") },
  errors: [404],
  session: true,
});

export const deleteSchedule = operation({
  method: "delete",
  path: "/v1/sessions/{sid}/schedules/{schedule_id}",
  operationId: "deleteSchedule",
  summary: "Delete a schedule (a turn it already submitted is left alone)",
  permission: "session.schedule",
  rateLimit: "request",
  params: sidWith("schedule_id"),
  responses: { 200: json(z.object({ deleted: z.literal(true) }), "Deleted") },
  errors: [404],
  session: true,
});
