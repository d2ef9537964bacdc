// A session object's SQLite database as `wrangler dev --persist-to` keeps it: which file it is, the pages
// SQLite appends to its write-ahead log (what the session really writes), and, through the sqlite3
// command when it is installed, the bytes of its log and of its running turn's checkpoint.
import { execFile, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";

/** Where the runtime's session objects keep their databases. */
export const sessionDbDir = (stack) => join(stack.rt.persistTo ?? "", "v3", "do", "agent-runtime-SessionObject");

const databases = (dir) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite") : []);

/** The session databases there now; pass them to newDatabase after creating one session. */
export const knownDatabases = (stack) => new Set(databases(sessionDbDir(stack)));

/** The path of the one session database created since `known`, or null when there is not exactly one. */
export function newDatabase(stack, known) {
  const dir = sessionDbDir(stack);
  const fresh = databases(dir).filter((f) => !known.has(f));
  return fresh.length === 1 ? join(dir, fresh[0]) : null;
}

/**
 * Follows a database's write-ahead log: the frames (one page each, plus a 24-byte header) of its current
 * generation. SQLite starts the log over after a checkpoint, with new salts in the log's header; frames
 * of the old generation left in the file carry the old salts and are not counted.
 */
export class WalWatch {
  constructor(dbPath) {
    this.path = `${dbPath}-wal`;
    this.fd = null;
    this.salts = null;
    this.frames = 0;
    this.frameBytes = 0;
  }

  /** The frames of the log's generation now, and whether the log started over since the last read. */
  read() {
    if (this.fd === null) {
      if (!existsSync(this.path)) return { frames: 0, restarted: false };
      this.fd = openSync(this.path, "r");
    }
    const header = Buffer.alloc(32);
    if (readSync(this.fd, header, 0, 32, 0) < 32) return { frames: 0, restarted: false };
    this.frameBytes = 24 + header.readUInt32BE(8);
    const salts = [header.readUInt32BE(16), header.readUInt32BE(20)];
    const restarted = this.salts !== null && (salts[0] !== this.salts[0] || salts[1] !== this.salts[1]);
    if (this.salts === null || restarted) this.frames = 0;
    this.salts = salts;
    const frame = Buffer.alloc(24);
    while (readSync(this.fd, frame, 0, 24, 32 + this.frames * this.frameBytes) === 24) {
      if (frame.readUInt32BE(8) !== salts[0] || frame.readUInt32BE(12) !== salts[1]) break;
      this.frames += 1;
    }
    return { frames: this.frames, restarted };
  }

  close() {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

export const hasSqlite3 = () => spawnSync("sqlite3", ["-version"]).status === 0;

const ROW_STATS = `SELECT
  (SELECT count(*) FROM events WHERE type = 'model.requested'),
  (SELECT count(*) FROM events),
  (SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM events),
  (SELECT coalesce(sum(length(CAST(state AS BLOB))), 0) FROM turn_state),
  (SELECT count(*) FROM turn_messages),
  (SELECT coalesce(sum(length(CAST(message AS BLOB))), 0) FROM turn_messages);`;

/**
 * Row sizes in bytes, read by a read-only sqlite3 beside the running object (WAL readers do not block the
 * writer): the model calls and events logged so far, the log's bytes, and the running turn's checkpoint
 * (its turn_state row and its turn_messages rows, the conversation of the turn).
 */
export function rowStats(dbPath) {
  return new Promise((resolve, reject) => {
    execFile("sqlite3", ["-readonly", "-separator", " ", dbPath, ROW_STATS], (err, stdout) => {
      if (err) return reject(err);
      const [model_calls, events, log_bytes, state_bytes, turn_messages, messages_bytes] = stdout.trim().split(" ").map(Number);
      resolve({ model_calls, events, log_bytes, checkpoint_bytes: state_bytes + messages_bytes, state_bytes, turn_messages, messages_bytes });
    });
  });
}
