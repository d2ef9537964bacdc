// Unauthenticated routes: health check and the event catalog.
import { eventCatalogSchema } from "../protocol/events-doc";
import { system as ops } from "../protocol/operations";
import { router } from "./http";
import { route } from "./operation-route";

export const system = router()
  .openapi(route(ops.health), (c) => c.json({ ok: true as const }, 200))
  .openapi(route(ops.getEventSchema), (c) => c.json(eventCatalogSchema(), 200));
