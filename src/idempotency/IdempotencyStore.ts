/**
 * The answers to requests sent with an `Idempotency-Key` (issue 44), as
 * Stripe keeps them: the first request with a key is claimed while it runs,
 * its answer is kept for a day, and a retry with the same key and the same
 * request is answered with that answer again instead of doing the work a
 * second time; a key sent with another request, or while the first still
 * runs, is refused by the caller (`server/idempotency.ts` decides, this port
 * only keeps). Records are found by a key that already names the team
 * (`idempotencyRecordKey`), so teams never see each other's.
 *
 * Adapters, one contract suite (`test/idempotency/IdempotencyStore.test.ts`):
 * - memory: one process (the library, tests);
 * - files: `<dataDir>/idempotency/<hash>.json`, 0600, written atomically
 *   once the answer is known; a claim lives in the process's memory only
 *   (a daemon that dies mid-request leaves no claim behind); expired
 *   answers are removed as they are met and by a sweep;
 * - Redis (`idempotencyRedis.ts`, `layerRedis`: the adapter
 *   imports the port, never the reverse): shared by every daemon, a claim
 *   taken with `SET NX` and expiring by itself.
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { ensurePrivateDirectory, writeFileAtomicAsync } from "../store/atomicWrite.ts"
import { markOutage } from "../store/outage.ts"

/** An answer as it is replayed: its status, the header fields that describe it, its body's bytes (base64). */
export const StoredAnswer = Schema.Struct({
  status: Schema.Int,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.String
})
export type StoredAnswer = typeof StoredAnswer.Type

/** What a key holds: a request running (claimed until `until`), or its answer (kept until `expiresAt`). */
export const IdempotencyRecord = Schema.Union([
  Schema.Struct({ state: Schema.Literal("running"), fingerprint: Schema.String, until: Schema.Number }),
  Schema.Struct({
    state: Schema.Literal("answered"),
    fingerprint: Schema.String,
    expiresAt: Schema.Number,
    answer: StoredAnswer
  })
])
export type IdempotencyRecord = typeof IdempotencyRecord.Type

export class IdempotencyStoreError extends Schema.TaggedError<IdempotencyStoreError>()("IdempotencyStoreError", {
  operation: Schema.Literals(["claim", "answer", "release"]),
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `The idempotency store failed to ${this.operation}`
  }
}
markOutage(IdempotencyStoreError)

/** The key a record is kept under: the team's and the client's key, hashed (fixed length, safe as a file name). */
export const idempotencyRecordKey = (team: string, key: string): string =>
  createHash("sha256").update(`${team}\n${key}`).digest("hex")

export interface IdempotencyStoreService {
  /**
   * Claims `key` for a request (`fingerprint`) until `until` (epoch ms),
   * unless a record holds it: answers undefined when claimed, else the
   * record that holds the key (a claim past its `until`, or an answer past
   * its `expiresAt`, holds nothing).
   */
  claim(
    key: string,
    fingerprint: string,
    now: number,
    until: number
  ): Effect.Effect<IdempotencyRecord | undefined, IdempotencyStoreError>
  /** Keeps the claimed request's answer until `expiresAt`. */
  answer(
    key: string,
    fingerprint: string,
    answer: StoredAnswer,
    expiresAt: number
  ): Effect.Effect<void, IdempotencyStoreError>
  /**
   * Gives up the claim this request took (`fingerprint`, held until
   * `until`): the request was refused, there is nothing to replay, a retry
   * runs again. A claim another request took since is left alone, so a
   * release asked again (its first reply lost) never frees a later claim.
   */
  release(key: string, fingerprint: string, until: number): Effect.Effect<void, IdempotencyStoreError>
}

/** The record as it counts at `now`: undefined when it has lapsed. */
export const liveRecord = (record: IdempotencyRecord | undefined, now: number): IdempotencyRecord | undefined => {
  if (record === undefined) return undefined
  return (record.state === "running" ? record.until : record.expiresAt) > now ? record : undefined
}

const makeMemory = (): IdempotencyStoreService => {
  const records = new Map<string, IdempotencyRecord>()
  return {
    claim: (key, fingerprint, now, until) =>
      Effect.sync(() => {
        const held = liveRecord(records.get(key), now)
        if (held !== undefined) return held
        records.set(key, { state: "running", fingerprint, until })
        return undefined
      }),
    answer: (key, fingerprint, answer, expiresAt) =>
      Effect.sync(() => {
        records.set(key, { state: "answered", fingerprint, expiresAt, answer })
      }),
    release: (key, fingerprint, until) =>
      Effect.sync(() => {
        const held = records.get(key)
        if (held?.state === "running" && held.fingerprint === fingerprint && held.until === until) records.delete(key)
      })
  }
}

const decodeRecord = Schema.decodeUnknownSync(Schema.fromJsonString(IdempotencyRecord))
const encodeRecord = Schema.encodeSync(Schema.fromJsonString(IdempotencyRecord))

/** How often the files adapter removes the answers past their day. */
const SWEEP_INTERVAL = "1 hour"

const makeFiles = (dataDir: string) =>
  Effect.gen(function* () {
    const directory = join(dataDir, "idempotency")
    ensurePrivateDirectory(directory)
    const fileOf = (key: string) => join(directory, `${key}.json`)
    // Claims of requests running in this process; answers are on disk.
    const running = new Map<string, Extract<IdempotencyRecord, { state: "running" }>>()
    const stored = (key: string): IdempotencyRecord | undefined => {
      try {
        return decodeRecord(readFileSync(fileOf(key), "utf8"))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
        throw error
      }
    }
    const sweep = Effect.sync(() => {
      const now = Date.now()
      for (const name of readdirSync(directory)) {
        if (!name.endsWith(".json")) continue
        const key = name.slice(0, -".json".length)
        try {
          if (liveRecord(stored(key), now) === undefined) rmSync(fileOf(key), { force: true })
        } catch {
          rmSync(fileOf(key), { force: true }) // a file that does not decode holds nothing
        }
      }
    })
    yield* sweep
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(SWEEP_INTERVAL), sweep)))
    const failed = (operation: IdempotencyStoreError["operation"]) => (cause: unknown) =>
      new IdempotencyStoreError({ operation, cause })
    return {
      // One synchronous step: of two requests with one key, the second sees the first's claim.
      claim: (key, fingerprint, now, until) =>
        Effect.try({
          try: () => {
            const held = liveRecord(running.get(key), now) ?? liveRecord(stored(key), now)
            if (held !== undefined) return held
            running.set(key, { state: "running", fingerprint, until })
            return undefined
          },
          catch: failed("claim")
        }),
      answer: (key, fingerprint, answer, expiresAt) =>
        Effect.tryPromise({
          try: () =>
            writeFileAtomicAsync(fileOf(key), encodeRecord({ state: "answered", fingerprint, expiresAt, answer })),
          catch: failed("answer")
        }).pipe(Effect.ensuring(Effect.sync(() => running.delete(key)))),
      release: (key, fingerprint, until) =>
        Effect.sync(() => {
          const held = running.get(key)
          if (held?.fingerprint === fingerprint && held.until === until) running.delete(key)
        })
    } satisfies IdempotencyStoreService
  })

export class IdempotencyStore extends Context.Service<IdempotencyStore, IdempotencyStoreService>()(
  "campusgate/idempotency/IdempotencyStore"
) {
  /** Records in this process's memory: lost when it ends. */
  static readonly layerMemory: Layer.Layer<IdempotencyStore> = Layer.sync(IdempotencyStore, makeMemory)

  /** Answers in `<dataDir>/idempotency/`, kept across restarts; claims in this process. */
  static readonly layerFiles = (dataDir: string): Layer.Layer<IdempotencyStore> =>
    Layer.effect(IdempotencyStore, makeFiles(dataDir))
}
