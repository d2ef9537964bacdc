// The client's reconnect backoff (src/client): pure, so in Node; reconnects against the worker: test/client/client.test.ts.
import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../src/client";

describe("reconnect backoff", () => {
  it("grows exponentially up to the cap, with jitter in the upper half", () => {
    const b = { initialMs: 100, maxMs: 1000, factor: 2 };
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffDelay(b, a, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffDelay(b, a, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
