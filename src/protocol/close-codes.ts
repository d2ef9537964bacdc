// The WebSocket close codes the runtime sends (docs/reference/websocket.md is generated from this table).

export interface CloseCode {
  code: number;
  /** When the runtime closes a socket with it. */
  when: string;
  /** What a client should do. */
  client: string;
}

export const CLOSE_CODES = {
  too_many_sockets: {
    code: 1013,
    when: "The session already has MAX_SOCKETS_PER_SESSION (default 100) sockets open (Try Again Later).",
    client: "Reconnect later, after the same cursor.",
  },
  slow_consumer: {
    code: 4008,
    when: "A socket opened with `channel` whose last ack lags more than WS_MAX_UNACKED_EVENTS (default 10000) events behind the log.",
    client: "Reconnect with the same `channel` and no `after`: delivery resumes after the last ack.",
  },
  session_erased: {
    code: 4010,
    when: "The session was erased (`DELETE /v1/sessions/:sid`, or its retention period ran out).",
    client: "Do not reconnect: every route of the session is 404 now.",
  },
  token_expired: {
    code: 4001,
    when: "The browser token that opened the socket expired (its `exp`); frames sent after it are not run.",
    client: "Get a new token and reconnect after the same cursor.",
  },
} as const satisfies Record<string, CloseCode>;
