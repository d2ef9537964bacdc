// Scheduled turns of a session: create, list, delete (the object validates times and runs them).
import { createRoute, z } from "@hono/zod-openapi";
import { CreateScheduleBody, ScheduleSchema } from "../protocol/schedules";
import { unwrap } from "../runtime/errors";
import { errorResponses, router, sessionStub } from "./http";

const Sid = z.object({ sid: z.string().openapi({ param: { name: "sid", in: "path" }, example: "ses_0123456789abcdef01234567" }) });
const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });

export const schedules = router()
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{sid}/schedules",
      operationId: "createSchedule",
      summary: "Schedule a turn: once (at), every every_s seconds, or on a cron expression in a time zone",
      request: { params: Sid, body: { required: true, content: { "application/json": { schema: CreateScheduleBody } } } },
      responses: {
        201: json(
          ScheduleSchema.extend({ duplicate: z.boolean().optional() }),
          "Created (or the schedule an earlier request with the same idempotency_key created)",
        ),
        ...errorResponses(400, 401, 403, 404, 409, 413, 422),
      },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).createSchedule(c.req.valid("json"))), 201),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/schedules",
      operationId: "listSchedules",
      summary: "The session's schedules, the next due first",
      request: { params: Sid },
      responses: { 200: json(z.object({ schedules: z.array(ScheduleSchema) }), "Schedules"), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).listSchedules()), 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/v1/sessions/{sid}/schedules/{schedule_id}",
      operationId: "deleteSchedule",
      summary: "Delete a schedule (a turn it already submitted is left alone)",
      request: { params: Sid.extend({ schedule_id: z.string().openapi({ param: { name: "schedule_id", in: "path" } }) }) },
      responses: { 200: json(z.object({ deleted: z.literal(true) }), "Deleted"), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const { sid, schedule_id } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sid).deleteSchedule(schedule_id)), 200);
    },
  );
