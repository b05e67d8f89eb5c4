/**
 * A shared store that comes back empty under running daemons (Redis: every
 * key of the deployment's prefix deleted, as a restart without persistence
 * leaves it; PostgreSQL: the schema dropped), through two daemons with a
 * data directory each: within a second and a half both refuse every
 * store-bound request with `503 STORE_LOST` naming what to do, keep
 * answering validations from memory, log it once at error level, and mint
 * no signing key or secret into the empty store; a daemon started against
 * it refuses to start with the same message. Once the old state is put
 * back (here by hand: the secrets, the store identity among them, and the
 * signing keys) both go on without a restart, and a token issued before
 * still verifies against the same keys.
 */
import { cpSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redis from "effect/persistence/Redis"
import { afterAll, beforeAll, expect, it } from "vitest"
import { postgresMigrations } from "../../src/deployment/postgresStores.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { migrate, PgClient, postgresClientLayer } from "../../src/store/postgres.ts"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { describePostgres, makeTestDatabase } from "../postgresTesting.ts"
import { deleteKeys, describeRedis, type Suite, testPrefix, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, waitForLine, within } from "./daemon.ts"
import { codeOf, makeCertificate, startSmtp, type TestSmtp } from "./smtpServer.ts"

/** What the test does to the store behind the daemons. */
interface Store {
  /** The `store` settings of the daemons. */
  readonly settings: Record<string, unknown>
  /** Everything the store holds that a backup would keep of secrets and signing keys, to put back. */
  readonly save: () => Promise<unknown>
  /** Empties the store as a restart without its data does. */
  readonly wipe: () => Promise<void>
  /** Puts back what `save` answered. */
  readonly putBack: (saved: unknown) => Promise<void>
  /** The names of the secrets and whether signing keys are stored, now. */
  readonly minted: () => Promise<{ readonly secrets: ReadonlyArray<string>; readonly signingKeys: number }>
  readonly close: () => Promise<void>
}

const lostSuite = (name: string, describeStore: Suite, open: () => Promise<Store>) =>
  describeStore(`a ${name} store that comes back empty`, () => {
    let store: Store
    let smtp: TestSmtp
    const daemons: Array<Daemon> = []
    let restarted: Daemon | undefined
    let key: string
    let dirs: { configDir: string; dataDir: string }

    const createGroup = (daemon: Daemon, id: string) =>
      call(daemon, "POST", "/api/v1/target-groups", {
        key,
        body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } }
      })
    const validate = (daemon: Daemon, email: string) =>
      call(daemon, "POST", "/api/v1/validate/target-group", { key, body: { email, targetGroupId: "uk-students" } })

    beforeAll(async () => {
      store = await open()
      const certificate = await makeCertificate()
      smtp = await startSmtp(certificate)
      dirs = copyConfig()
      writeFileSync(join(dirs.configDir, "smtp-ca.pem"), certificate.cert)
      setSettings(dirs, [
        [["store"], store.settings],
        [
          ["verification", "mail"],
          {
            from: "Acme <offers@acme.example>",
            smtp: { host: "127.0.0.1", port: smtp.port, security: "starttls", ca: "smtp-ca.pem" }
          }
        ]
      ])
      key = makeKey(dirs, "acme", allScopes)
      // One after the other: the first start mints the identity, the second joins it.
      for (const data of ["a", "b"])
        daemons.push(await startDaemon({ configDir: dirs.configDir, dataDir: join(dirs.dataDir, data) }))
    }, 90_000)

    afterAll(async () => {
      await Promise.all([...daemons, ...(restarted === undefined ? [] : [restarted])].map((daemon) => daemon.stop()))
      await smtp?.close()
      await store?.close()
    })

    it("refuses store-bound requests with STORE_LOST, mints nothing, refuses a start, and goes on once restored", async () => {
      const [a, b] = daemons as [Daemon, Daemon]
      expect((await createGroup(a, "before-loss")).status).toBe(201)
      const started = await call(a, "POST", "/api/v1/verifications", {
        key,
        body: { email: "lee@ox.ac.uk", offerId: "acme-student-discount" }
      })
      expect(started.status, JSON.stringify(started.body)).toBe(201)
      const [mail] = await smtp.waitFor(1)
      const confirmed = await call(a, "POST", `/api/v1/verifications/${started.body.id}/confirm`, {
        key,
        body: { code: codeOf(mail!) }
      })
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200)
      const token = confirmed.body.eligibility.token as string
      const jwksBefore = (await call(a, "GET", "/.well-known/jwks.json")).body
      const saved = await store.save()

      await store.wipe()
      // Both daemons notice within a second and a half, and say it once at error level.
      for (const daemon of daemons) {
        const took = await within(
          async () => (await createGroup(daemon, `lost-${Date.now()}`)).body?.code === "STORE_LOST",
          3000
        )
        expect(took).toBeLessThan(1500)
        const refused = await createGroup(daemon, "during-loss")
        expect(refused.status).toBe(503)
        expect(refused.body.code).toBe("STORE_LOST")
        expect(refused.body.detail).toMatch(/came back empty.*campusgate restore --from.*accept-new/s)
        expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
        const line = await waitForLine(
          daemon,
          (entry) => entry.level === "error" && /lost or replaced/.test(String(entry.msg))
        )
        expect(String(line.reason)).toMatch(/campusgate restore --from/)
        // Validations answer from memory.
        const validated = await validate(daemon, "ann@ox.ac.uk")
        expect(validated.status).toBe(200)
        expect(validated.body.isValid).toBe(true)
      }
      // What would sign or mint is refused too.
      const verification = await call(b, "POST", "/api/v1/verifications", {
        key,
        body: { email: "lou@ox.ac.uk", offerId: "acme-student-discount" }
      })
      expect(verification.status).toBe(503)
      expect(verification.body.code).toBe("STORE_LOST")
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(
        daemons.every(
          (daemon) => daemon.lines.filter((entry) => /lost or replaced/.test(String(entry.msg))).length === 1
        )
      ).toBe(true)

      // A daemon started on a's data directory against the emptied store refuses to start, saying why.
      const copy = join(dirs.dataDir, "a-restarted")
      cpSync(join(dirs.dataDir, "a"), copy, { recursive: true })
      await expect(startDaemon({ configDir: dirs.configDir, dataDir: copy })).rejects.toThrow(
        /exited with [1-9]\d*:[\s\S]*came back empty[\s\S]*campusgate restore --from/
      )
      expect(await store.minted()).toEqual({ secrets: [], signingKeys: 0 })

      // The old state put back: both go on without a restart, with the same keys.
      await store.putBack(saved)
      for (const daemon of daemons) {
        const took = await within(async () => (await createGroup(daemon, `after-${Date.now()}`)).status === 201, 5000)
        expect(took).toBeLessThan(1500)
        const jwks = (await call(daemon, "GET", "/.well-known/jwks.json")).body
        expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual(jwksBefore.keys.map((k: { kid: string }) => k.kid))
        await verifyEligibilityToken(token, { jwks, offerId: "acme-student-discount" })
        await waitForLine(daemon, (entry) => /identity again/.test(String(entry.msg)))
      }
      restarted = await startDaemon({ configDir: dirs.configDir, dataDir: copy })
      expect((await validate(restarted, "ann@ox.ac.uk")).status).toBe(200)
    }, 90_000)
  })

lostSuite("Redis", describeRedis, async () => {
  const prefix = testPrefix()
  const runtime = ManagedRuntime.make(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix }).pipe(Layer.orDie))
  const send = <A>(command: string, ...args: Array<string>) =>
    runtime.runPromise(Effect.flatMap(Redis.Redis, (redis) => redis.send<A>(command, ...args)))
  const keysOf = async (pattern: string) => (await send<Array<string>>("KEYS", `${prefix}${pattern}`)).sort()
  return {
    settings: { kind: "redis", url: testRedisUrl, keyPrefix: prefix },
    save: async () => {
      const keys = [...(await keysOf("secrets:*")), `${prefix}signing-keys`]
      return Promise.all(keys.map(async (key) => [key, await send<string>("GET", key)] as const))
    },
    wipe: () => runtime.runPromise(deleteKeys(prefix)),
    putBack: async (saved) => {
      for (const [key, value] of saved as ReadonlyArray<readonly [string, string]>) await send("SET", key, value)
    },
    minted: async () => ({
      secrets: (await keysOf("secrets:*")).map((key) => key.slice(`${prefix}secrets:`.length)),
      signingKeys: (await keysOf("signing-keys")).length
    }),
    close: async () => {
      await runtime.runPromise(deleteKeys(prefix))
      await runtime.dispose()
    }
  }
})

lostSuite("PostgreSQL", describePostgres, async () => {
  const database = await makeTestDatabase()
  const runtime = ManagedRuntime.make(postgresClientLayer(database.url).pipe(Layer.orDie))
  const run = <A>(use: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(Effect.orDie(Effect.flatMap(PgClient.PgClient, use)))
  return {
    settings: { kind: "postgres", url: database.url },
    save: () =>
      run((sql) =>
        Effect.all({
          secrets: sql<{ name: string; value: string }>`select name, value from campusgate_secrets`,
          keys: sql<{ document: string }>`select document::text as document from campusgate_verification_signing_keys`
        })
      ),
    wipe: () => run((sql) => Effect.asVoid(Effect.andThen(sql`drop schema public cascade`, sql`create schema public`))),
    putBack: (saved) => {
      const { secrets, keys } = saved as {
        secrets: ReadonlyArray<{ name: string; value: string }>
        keys: ReadonlyArray<{ document: string }>
      }
      return run((sql) =>
        Effect.gen(function* () {
          yield* migrate(postgresMigrations)
          for (const { name, value } of secrets)
            yield* sql`insert into campusgate_secrets (name, value) values (${name}, ${value})`
          yield* sql`update campusgate_verification_signing_keys set document = ${keys[0]!.document}::jsonb`
        }).pipe(Effect.provideService(PgClient.PgClient, sql))
      )
    },
    minted: () =>
      run((sql) =>
        Effect.gen(function* () {
          const [present] = yield* sql<{
            present: boolean
          }>`select to_regclass('campusgate_secrets') is not null as present`
          if (present?.present !== true) return { secrets: [], signingKeys: 0 }
          const secrets = yield* sql<{ name: string }>`select name from campusgate_secrets order by name`
          const [row] = yield* sql<{ document: string }>`
            select document::text as document from campusgate_verification_signing_keys`
          return {
            secrets: secrets.map((secret) => secret.name),
            signingKeys: row === undefined ? 0 : (JSON.parse(row.document).keys as Array<unknown>).length
          }
        })
      ),
    close: async () => {
      await runtime.dispose()
      await database.drop()
    }
  }
})
