// Outbound subscriptions of a session: create, list, enable or disable, delete (the object delivers).

import { unwrap } from "../protocol/errors";
import { subscriptions as ops } from "../protocol/operations";
import { router, sessionStub } from "./http";
import { route } from "./operation-route";

export const subscriptions = router()
  .openapi(route(ops.createSubscription), async (c) =>
    c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).createSubscription(c.req.valid("json"))), 201),
  )
  .openapi(route(ops.listSubscriptions), async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).listSubscriptions()), 200))
  .openapi(route(ops.updateSubscription), async (c) => {
    const { sid, subscription_id } = c.req.valid("param");
    return c.json(unwrap(await sessionStub(c.env, sid).enableSubscription(subscription_id, c.req.valid("json").enabled)), 200);
  })
  .openapi(route(ops.deleteSubscription), async (c) => {
    const { sid, subscription_id } = c.req.valid("param");
    return c.json(unwrap(await sessionStub(c.env, sid).deleteSubscription(subscription_id)), 200);
  });
