-- A subscription's secret rotation (PATCH .../subscriptions/:id {secret}): the replaced secret keeps signing
-- deliveries beside the new one (two Standard Webhooks signatures) until `previous_secret_until`.
ALTER TABLE subscriptions ADD COLUMN previous_secret TEXT;
ALTER TABLE subscriptions ADD COLUMN previous_secret_until INTEGER;
