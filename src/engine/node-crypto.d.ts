// The part of node:crypto the engine uses (request-fingerprint.ts): workerd provides it under nodejs_compat and
// Node natively, while the engine's type-checks carry no Node types.
declare module "node:crypto" {
  interface Hash {
    update(data: string): Hash;
    /** A new hash with this one's state: hashing on from it leaves this one as it is. */
    copy(): Hash;
    digest(encoding: "hex"): string;
  }
  export function createHash(algorithm: "sha256"): Hash;
  export type { Hash };
}
