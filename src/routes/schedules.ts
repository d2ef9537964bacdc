// Scheduled turns of a session: create, list, delete (the object validates times and runs them).

import { unwrap } from "../protocol/errors";
import { schedules as ops } from "../protocol/operations";
import { router, sessionStub } from "./http";
import { route } from "./operation-route";

export const schedules = router()
  .openapi(route(ops.createSchedule), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).createSchedule(c.req.valid("json"))), 201))
  .openapi(route(ops.listSchedules), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).listSchedules()), 200))
  .openapi(route(ops.deleteSchedule), async (c) => {
    const { sid, schedule_id } = c.req.valid("param");
    return c.json(unwrap(await sessionStub(c.env, sid).deleteSchedule(schedule_id)), 200);
  });
