import { mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SIGNING_KEYS_FILE, SigningKeyStore } from "../../src/verification/SigningKeyStore.ts"
import { activeKey, publishedKeys, rotate } from "../../src/verification/signing.ts"
import * as SigningKeyPostgres from "../../src/verification/signingKeyPostgres.ts"
import * as SigningKeyRedis from "../../src/verification/signingKeyRedis.ts"
import { describePostgres, testPostgresLayer } from "../postgresTesting.ts"
import { describeRedis, testRedisLayer } from "../redisTesting.ts"
import { storeContract } from "../storeContract.ts"

const DAY = 86_400_000

const contract = storeContract("SigningKeyStore", (layer: () => Layer.Layer<SigningKeyStore>) => {
  it.effect("starts empty; a rotation retires the signing key, which stays published until its tokens expire", () =>
    Effect.gen(function* () {
      const store = yield* SigningKeyStore
      expect(yield* store.list()).toEqual([])
      const first = yield* store.update((keys) => rotate(keys, "EdDSA", 0, 365 * DAY))
      expect(first).toHaveLength(1)
      const second = yield* store.update((keys) => rotate(keys, "ES256", 10 * DAY, 365 * DAY))
      expect(yield* store.list()).toEqual(second)
      expect(activeKey(second)?.algorithm).toBe("ES256")
      expect(publishedKeys(second, 11 * DAY).keys.map((key) => key.kid)).toEqual([second[1]!.kid, first[0]!.kid])
      // Past the longest token's life the retired key is no longer published, and the next rotation drops it.
      expect(publishedKeys(second, 376 * DAY).keys).toHaveLength(1)
      expect(yield* store.update((keys) => rotate(keys, "EdDSA", 400 * DAY, 365 * DAY))).toHaveLength(2)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("changes made at once from several places are all kept", () =>
    Effect.gen(function* () {
      const store = yield* SigningKeyStore
      yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => store.update((keys) => rotate(keys, "EdDSA", i * DAY, 365 * DAY))),
        { concurrency: "unbounded" }
      )
      expect(yield* store.list()).toHaveLength(5)
    }).pipe(Effect.provide(layer()))
  )
})

contract("memory", () => SigningKeyStore.layerMemory)
contract("files", () => SigningKeyStore.layerFiles(mkdtempSync(join(tmpdir(), "campusgate-keys-"))))
contract("redis", () => SigningKeyRedis.layerRedis.pipe(Layer.provide(testRedisLayer())), describeRedis)
contract(
  "postgres",
  () => SigningKeyPostgres.layerPostgres.pipe(Layer.provide(testPostgresLayer(SigningKeyPostgres.migrations))),
  describePostgres
)

it.effect("the file adapter keeps private keys readable by their owner only", () =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-keys-"))
    yield* SigningKeyStore.makeFiles(dir).update((keys) => rotate(keys, "EdDSA", 0, DAY))
    expect(statSync(join(dir, SIGNING_KEYS_FILE)).mode & 0o777).toBe(0o600)
    // Another process's change (the CLI's rotation) is seen without a restart.
    yield* SigningKeyStore.makeFiles(dir).update((keys) => rotate(keys, "EdDSA", 1, DAY))
    expect(yield* SigningKeyStore.makeFiles(dir).list()).toHaveLength(2)
  })
)
