/**
 * Confidential clients' secrets, kept as API keys are (`keys/apiKeys.ts`):
 * a secret is `cgs_` and 43 base64url characters (32 random bytes), made by
 * `campusgate clients secret`, and only its hash is written down
 * (`secretHashes` in `clients/<id>.yaml`): `sha256:` and the hex SHA-256.
 * A fast unsalted hash fits, as for API keys: the secret is 256 random bits,
 * nothing a table or a brute force finds. A presented secret is checked
 * against every hash the client lists (a rotation lists the old and the new
 * one until every backend has the new), in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

export const CLIENT_SECRET_PREFIX = "cgs_"
const HASH_PREFIX = "sha256:"

/** A new client secret (256 bits from the system's secure random source). */
export const generateClientSecret = (): string => `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`

const digest = (secret: string): Buffer => createHash("sha256").update(secret, "utf8").digest()

/** `sha256:` and the hex SHA-256 of the secret: what `secretHashes` lists. */
export const hashClientSecret = (secret: string): string => `${HASH_PREFIX}${digest(secret).toString("hex")}`

/** Whether `presented` is the secret of one of `hashes`; each compared in constant time. */
export const secretMatches = (hashes: ReadonlyArray<string>, presented: string): boolean => {
  const actual = digest(presented)
  let matched = false
  for (const hash of hashes) {
    const expected = Buffer.from(hash.slice(HASH_PREFIX.length), "hex")
    if (expected.length === actual.length && timingSafeEqual(expected, actual)) matched = true
  }
  return matched
}
