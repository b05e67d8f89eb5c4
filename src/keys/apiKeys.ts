/**
 * API keys: making them, hashing them, checking a presented key against the
 * stored records, and reading `--expires` values. Reading and writing
 * `api-keys.yaml` is in `apiKeyStore.ts`.
 *
 * A key is `cgk_` and 43 base64url characters (32 random bytes). The fixed
 * prefix lets secret scanners recognise a leaked key; only the key's hash is
 * ever stored.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import * as Schema from "effect/Schema"
import { type ApiKeyId, type ApiKeyRecord, isKeyActive } from "../domain/ApiKey.ts"
import { Instant } from "../domain/Offer.ts"

export const API_KEY_PREFIX = "cgk_"
const KEY_BYTES = 32
/** `cgk_` and the unpadded base64url of 32 bytes (43 characters). */
export const API_KEY_LENGTH = API_KEY_PREFIX.length + Math.ceil((KEY_BYTES * 4) / 3)
const KEY_PATTERN = /^cgk_[A-Za-z0-9_-]{43}$/

const HASH_PREFIX = "sha256:"
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
const ID_LENGTH = 12

export interface GeneratedApiKey {
  readonly id: ApiKeyId
  /** The secret: shown once, never stored. */
  readonly key: string
}

/** A new key id: `key_` and 12 random lower-case base32 characters. */
export const generateApiKeyId = (): ApiKeyId => {
  // 32 divides 256, so `byte & 31` picks every character with the same probability.
  const bytes = randomBytes(ID_LENGTH)
  let id = "key_"
  for (const byte of bytes) id += ID_ALPHABET[byte & 31]
  return id as ApiKeyId
}

/** A new key (256 bits from the system's secure random source) and a new id for its record. */
export const generateApiKey = (): GeneratedApiKey => ({
  id: generateApiKeyId(),
  key: `${API_KEY_PREFIX}${randomBytes(KEY_BYTES).toString("base64url")}`
})

/** Whether `text` has the shape of a Campusgate key (prefix, length, alphabet). */
export const looksLikeApiKey = (text: string): boolean => text.length === API_KEY_LENGTH && KEY_PATTERN.test(text)

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()

/**
 * `sha256:` and the hex SHA-256 of the key. A fast, unsalted hash is the
 * right choice here: keys are 256 random bits, so there is nothing to
 * brute-force or look up in a table (slow password hashes exist for
 * low-entropy secrets), and the daemon hashes the key on every request.
 */
export const hashApiKey = (key: string): string => `${HASH_PREFIX}${digest(key).toString("hex")}`

export type KeyStatus = "active" | "revoked" | "expired"

/** What a key is at `now` (epoch milliseconds), by `isKeyActive`; revoked wins over expired. */
export const keyStatus = (record: Pick<ApiKeyRecord, "expiresAt" | "revokedAt">, now: number): KeyStatus =>
  isKeyActive(record, now) ? "active" : record.revokedAt !== undefined ? "revoked" : "expired"

export type KeyVerification =
  | { readonly ok: true; readonly record: ApiKeyRecord }
  | { readonly ok: false; readonly reason: "unknown" | "revoked" | "expired" }

const unknown: KeyVerification = { ok: false, reason: "unknown" }

/**
 * The stored records by hash, so checking a presented key costs one hash
 * and one map lookup. A key that matched is remembered (by its text, in
 * this index only), so the next request with it skips the SHA-256: hashing
 * was about 5% of the daemon's CPU on the single-validation benchmark
 * (bench/http.ts). The memory holds at most one key per record, since only
 * a key whose hash matches is kept; it is never logged or exposed, and it
 * goes with the index, which is rebuilt from each config snapshot, so a
 * revoked or removed key is forgotten on the reload that revokes it. The
 * key's status is still decided on every call, so expiry applies at once.
 */
export class ApiKeyIndex {
  readonly #byHash: Map<string, ApiKeyRecord>
  readonly #byId: Map<string, ApiKeyRecord>
  readonly #matched = new Map<string, ApiKeyRecord>()

  constructor(records: Iterable<ApiKeyRecord>) {
    this.#byHash = new Map()
    this.#byId = new Map()
    for (const record of records) {
      const hash = record.hash.toLowerCase()
      if (!this.#byHash.has(hash)) this.#byHash.set(hash, record)
      if (!this.#byId.has(record.id)) this.#byId.set(record.id, record)
    }
  }

  get size(): number {
    return this.#byHash.size
  }

  /** The record of the presented key when it is known and usable at `now` (epoch milliseconds), else why not. */
  verify(presented: string, now: number): KeyVerification {
    const record = this.#matched.get(presented) ?? this.#match(presented)
    if (record === undefined) return unknown
    const status = keyStatus(record, now)
    return status === "active" ? { ok: true, record } : { ok: false, reason: status }
  }

  /**
   * The record of the key with this id when it is known and usable at `now`,
   * else why not: how a console session, which names the key it was made
   * from, is checked on every use (a revoked or expired key ends it at once).
   */
  verifyId(id: string, now: number): KeyVerification {
    const record = this.#byId.get(id)
    if (record === undefined) return unknown
    const status = keyStatus(record, now)
    return status === "active" ? { ok: true, record } : { ok: false, reason: status }
  }

  /** The record whose hash is the presented key's, compared in constant time; remembered. */
  #match(presented: string): ApiKeyRecord | undefined {
    if (!looksLikeApiKey(presented)) return undefined
    const computed = digest(presented)
    const record = this.#byHash.get(`${HASH_PREFIX}${computed.toString("hex")}`)
    if (record === undefined) return undefined
    const stored = Buffer.from(record.hash.slice(HASH_PREFIX.length), "hex")
    if (stored.length !== computed.length || !timingSafeEqual(stored, computed)) return undefined
    this.#matched.set(presented, record)
    return record
  }
}

/** Checks a presented key against `records` (an index, or records to index first). */
export const verifyApiKey = (
  presented: string,
  records: ApiKeyIndex | Iterable<ApiKeyRecord>,
  now: number
): KeyVerification => (records instanceof ApiKeyIndex ? records : new ApiKeyIndex(records)).verify(presented, now)

export class InvalidExpiry extends Schema.TaggedError<InvalidExpiry>()("InvalidExpiry", {
  input: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid expiry "${this.input}": ${this.reason}`
  }
}

const HOUR = 3_600_000
const DAY = 24 * HOUR
const unitMs: Record<string, number> = { h: HOUR, d: DAY, w: 7 * DAY, y: 365 * DAY }
const EXPIRY_FORMS =
  "use a duration such as 12h, 90d, 4w or 1y, a date such as 2027-01-01, or a date-time with a time zone"

/**
 * An `--expires` value as an ISO instant: a duration from `now` (epoch
 * milliseconds) in hours, days, weeks or 365-day years (`12h`, `90d`, `4w`,
 * `1y`), a date (`2027-01-01`, midnight UTC) or a date-time with a time
 * zone. It must lie in the future.
 */
export const parseExpiry = (input: string, now: number): string => {
  const text = input.trim()
  let at: number
  const duration = /^(\d{1,6})([hdwy])$/.exec(text)
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (duration !== null) {
    const amount = Number(duration[1])
    if (amount === 0) throw new InvalidExpiry({ input, reason: "the duration must be above zero" })
    at = now + amount * unitMs[duration[2]!]!
  } else if (date !== null) {
    at = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))
    if (Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== text) {
      throw new InvalidExpiry({ input, reason: "no such date" })
    }
  } else if (Schema.is(Instant)(text)) {
    at = Date.parse(text)
  } else {
    throw new InvalidExpiry({ input, reason: EXPIRY_FORMS })
  }
  if (!Number.isFinite(at) || Number.isNaN(new Date(at).getTime())) {
    throw new InvalidExpiry({ input, reason: "too far in the future" })
  }
  if (at <= now) throw new InvalidExpiry({ input, reason: "it is not in the future" })
  return new Date(at).toISOString()
}
