import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { archiveWriter } from "../../../src/cli/copy/archive.ts"
import { backupStore, migrateStore, restoreStore } from "../../../src/cli/copy/copyStore.ts"
import { portsOf } from "../../../src/cli/copy/readStore.ts"
import type { StoreKind } from "../../../src/cli/copy/storeKinds.ts"
import { holdsData } from "../../../src/cli/copy/writeStore.ts"
import { deploymentSecrets } from "../../../src/deployment/secrets.ts"
import { hashKeyFromSecret } from "../../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../../src/stats/UsageRecorder.ts"
import { toOfferUsage } from "../../../src/stats/UsageState.ts"
import { postgresAvailable } from "../../postgresTesting.ts"
import { redisAvailable } from "../../redisTesting.ts"
import { eligible, MAY_1 } from "../../stats/fixtures.ts"
import {
  contentOf,
  differences,
  directories,
  jobIds,
  openTestStore,
  seedStore,
  verificationRecord
} from "./storeSeed.ts"

const PASSPHRASE = "correct horse battery staple"
const listedSecrets = Object.values(deploymentSecrets).map((secret) => secret.name)
const archiveIn = () => join(directories().dataDir, "..", "backup.cgb")

const both = redisAvailable && postgresAvailable
const describeBoth = both ? describe : describe.skip

/** What a store's ports say it holds, first part found; undefined when empty. */
const heldBy = (store: Effect.Success<ReturnType<typeof openTestStore>>) =>
  Effect.scoped(Effect.flatMap(portsOf(store), holdsData))

const roundTrip = (from: StoreKind, to: StoreKind) =>
  it.live(
    `${from} → archive → ${to}: every record arrives equal, finished jobs with their bytes, secrets sealed`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const source = yield* openTestStore(from)
          yield* seedStore(source)
          const file = archiveIn()
          const made = yield* backupStore(source, file, { jobs: true, passphrase: PASSPHRASE })
          expect(made.counts).toMatchObject({ resources: 2, apiKeys: 1, verifications: 25, jobs: 1, reviewTeams: 1 })
          expect(statSync(file).mode & 0o777).toBe(0o600)
          // Secrets and signing keys are sealed: no value appears in the archive.
          const text = gunzipSync(readFileSync(file)).toString("utf8")
          expect(text).not.toContain(`webhook-secret-${from}-value`)
          expect(text).not.toContain("privateKey")
          expect(JSON.parse(text.split("\n")[0]!)).toMatchObject({ format: "campusgate-backup", kind: from })

          const target = yield* openTestStore(to)
          const restored = yield* restoreStore(target, file, { passphrase: PASSPHRASE, keepExisting: false })
          expect(restored.written).toEqual(made.counts)
          const secrets = to === "files" || from === "files" ? listedSecrets : undefined
          expect(
            differences(yield* contentOf(target, "all", secrets), yield* contentOf(source, "finished", secrets))
          ).toEqual({ onlyLeft: [], onlyRight: [] })
          // The queued job stayed behind: backups carry finished jobs only.
          expect((yield* contentOf(target, "all")).some((line) => line.includes(jobIds.queued))).toBe(false)
        })
      ),
    60_000
  )

describeBoth("campusgate backup and restore between every kind", () => {
  roundTrip("files", "redis")
  roundTrip("redis", "postgres")
  roundTrip("postgres", "files")

  it.live(
    "migrate --from redis --to postgres copies every record, queued jobs too, and the secrets no list names",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const source = yield* openTestStore("redis")
          yield* seedStore(source)
          const target = yield* openTestStore("postgres")
          const moved = yield* migrateStore(source, target)
          expect(moved).toMatchObject({ jobs: 2, verifications: 25, secrets: listedSecrets.length + 1 })
          expect(differences(yield* contentOf(target, "all"), yield* contentOf(source, "all"))).toEqual({
            onlyLeft: [],
            onlyRight: []
          })
          expect(yield* target.secrets).toContainEqual(["store-identity", "identity-of-redis"])
          const again = yield* Effect.flip(migrateStore(source, target))
          expect(String(again)).toContain("already holds data (API-created resources)")
        })
      ),
    60_000
  )
})

describe.skipIf(!redisAvailable)("campusgate restore refuses what it cannot restore whole", () => {
  /** A backup of a seeded files store, and an empty Redis store to restore into. */
  const prepared = Effect.gen(function* () {
    const source = yield* openTestStore("files")
    yield* seedStore(source, { verifications: 10 })
    const file = archiveIn()
    yield* backupStore(source, file, { jobs: true, passphrase: PASSPHRASE })
    const target = yield* openTestStore("redis")
    return { source, file, target }
  })

  it.live("a restore that stops part way says at which line, and what it wrote before", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const target = yield* openTestStore("redis")
        const file = archiveIn()
        // A whole archive, but a job's bytes with no job before them: the writing stops there.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const writer = yield* archiveWriter(file, { kind: "files", jobs: "finished", passphrase: PASSPHRASE })
            yield* writer.put({ t: "resource", kind: "offer", id: "spring", text: "id: spring\n" })
            yield* writer.put({ t: "verification", record: verificationRecord(1) })
            yield* writer.put({ t: "jobBytes", file: "input", data: new Uint8Array([1]) })
            yield* writer.end
          })
        )
        const stopped = yield* Effect.flip(restoreStore(target, file, { passphrase: PASSPHRASE, keepExisting: false }))
        expect(String(stopped)).toContain(`The restore stopped at line 4 of ${file}: a job's bytes came before its job`)
        expect(String(stopped)).toContain("Written before it stopped: resources 1, verifications 1")
      })
    )
  )

  it.live("a wrong passphrase: told before anything is restored", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { file, target } = yield* prepared
        const failed = yield* Effect.flip(
          restoreStore(target, file, { passphrase: "not the passphrase", keepExisting: false })
        )
        expect(String(failed)).toContain("the passphrase does not open this backup")
        expect(yield* heldBy(target)).toBeUndefined()
        expect(yield* target.secrets).toEqual([])
      })
    )
  )

  it.live("a truncated, a damaged, a foreign and a newer archive: each named, nothing restored", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { file, target } = yield* prepared
        const whole = readFileSync(file)
        const lines = gunzipSync(whole).toString("utf8").split("\n")
        const variant = (name: string, bytes: Uint8Array) => {
          const path = `${file}.${name}`
          writeFileSync(path, bytes)
          return path
        }
        const cases: ReadonlyArray<readonly [string, string]> = [
          [variant("cut", whole.subarray(0, Math.floor(whole.length / 2))), "truncated"],
          [variant("lastless", gzipSync(lines.slice(0, -2).join("\n"))), "without its last line: it is truncated"],
          [
            variant("damaged", gzipSync(lines.map((line, i) => (i === 5 ? line.slice(0, 20) : line)).join("\n"))),
            "line 6: not a JSON line"
          ],
          [
            variant(
              "wrongfield",
              gzipSync(
                lines.map((line, i) => (i === 6 ? line.replace(/"t":"(\w+)"/, '"t":"unknown"') : line)).join("\n")
              )
            ),
            "line 7: the entry does not decode"
          ],
          [variant("foreign", Buffer.from("id,email\n1,a@x.edu\n")), "not a campusgate backup (not gzip)"],
          [
            variant(
              "newer",
              gzipSync([lines[0]!.replace('"formatVersion":1', '"formatVersion":2'), ...lines.slice(1)].join("\n"))
            ),
            "written in backup format 2"
          ]
        ]
        for (const [path, problem] of cases) {
          const failed = yield* Effect.flip(restoreStore(target, path, { passphrase: PASSPHRASE, keepExisting: false }))
          expect(String(failed), path).toContain(problem)
          expect(yield* heldBy(target), path).toBeUndefined()
        }
      })
    )
  )

  it.live(
    "a store holding data is refused; --force keeps what it holds and adds the rest, counting nothing twice",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { source, file, target } = yield* prepared
          yield* restoreStore(target, file, { passphrase: PASSPHRASE, keepExisting: false })
          const refused = yield* Effect.flip(
            restoreStore(target, file, { passphrase: PASSPHRASE, keepExisting: false })
          )
          expect(String(refused)).toContain("already holds data (API-created resources)")
          // A daemon still running counts one more validation meanwhile.
          const counted = () =>
            Effect.scoped(Effect.flatMap(portsOf(target), (ports) => ports.usage.get("spring"))).pipe(
              Effect.map((usage) => toOfferUsage(usage).validations)
            )
          const oneMore = new UsageRecorder(hashKeyFromSecret("copy"))
          oneMore.record("spring", "eve@ox.ac.uk", eligible("eve@ox.ac.uk", "uk"), MAY_1)
          yield* Effect.scoped(
            Effect.flatMap(portsOf(target), (ports) =>
              ports.usage.applyOnce("spring", "daemon-a", 1, oneMore.take().get("spring")!)
            )
          )
          expect(yield* counted()).toBe(5)
          const again = yield* restoreStore(target, file, { passphrase: PASSPHRASE, keepExisting: true })
          expect(again.written).toMatchObject({ resources: 0, apiKeys: 0, verifications: 0, jobs: 0 })
          // The archive's four were added by the first restore, not again; the daemon's one stays.
          expect(yield* counted()).toBe(5)
          const held = yield* contentOf(target, "all", listedSecrets)
          const archived = yield* contentOf(source, "finished", listedSecrets)
          // The one difference: the offer's statistics, with the daemon's count.
          const { onlyLeft } = differences(held, archived)
          expect(onlyLeft).toHaveLength(1)
          expect(onlyLeft[0]).toContain('"daemon-a":1')
        })
      )
  )
})
