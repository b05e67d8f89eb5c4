/**
 * `campusgate migrate` as an operator runs it: from Redis (the server
 * `--from-url` names, under `--from-prefix`) into the PostgreSQL database
 * campusgate.yaml names; the line it prints hides the database password;
 * a target holding data, a missing source URL and a copy onto itself are
 * refused in one line.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openStoreOf } from "../../src/cli/copy/storeKinds.ts"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { makeTestDatabase, postgresAvailable } from "../postgresTesting.ts"
import { deleteKeys, redisAvailable, testPrefix, testRedisUrl } from "../redisTesting.ts"
import { copyConfig, setSettings } from "../server/daemon.ts"
import { seedStore } from "./copy/storeSeed.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))

describe.skipIf(!(redisAvailable && postgresAvailable))("campusgate migrate --from redis --to postgres", () => {
  const prefix = testPrefix()
  let database: { readonly url: string; readonly drop: () => Promise<void> }
  let dirs: { configDir: string; dataDir: string }
  /** The database's URL with a password (the test server trusts loopback, so any password opens it). */
  let withPassword: string

  const campusgate = (args: ReadonlyArray<string>) => {
    const ran = spawnSync(process.execPath, [main, ...args, "--config", dirs.configDir, "--data", dirs.dataDir], {
      encoding: "utf8",
      env: {
        ...process.env,
        CAMPUSGATE_CONFIG: "",
        CAMPUSGATE_DATA: "",
        CAMPUSGATE_DATABASE_URL: "",
        CAMPUSGATE_REDIS_URL: ""
      }
    })
    return { status: ran.status, output: `${ran.stdout}${ran.stderr}` }
  }

  beforeAll(async () => {
    database = await makeTestDatabase()
    const url = new URL(database.url)
    url.password = "hidden-password"
    withPassword = url.toString()
    dirs = copyConfig()
    setSettings(dirs, [[["store"], { kind: "postgres", url: withPassword }]])
    await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(openStoreOf({ kind: "redis", url: testRedisUrl, keyPrefix: prefix }, dirs), (store) =>
          seedStore(store)
        )
      )
    )
  }, 60_000)

  afterAll(async () => {
    await database?.drop()
    await Effect.runPromise(
      deleteKeys(prefix).pipe(Effect.provide(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix })))
    )
  })

  it("moves every record, prints where without the password, and refuses what it cannot do", () => {
    const missing = campusgate(["migrate", "--from", "redis", "--to", "postgres"])
    expect(missing.status).not.toBe(0)
    expect(missing.output).toContain("--from-url URL")

    const onto = campusgate(["migrate", "--from", "postgres", "--from-url", withPassword, "--to", "postgres"])
    expect(onto.status).not.toBe(0)
    expect(onto.output).toContain("name the same store")
    expect(onto.output).not.toContain("hidden-password")

    const moved = campusgate([
      "migrate",
      "--from",
      "redis",
      "--from-url",
      testRedisUrl,
      "--from-prefix",
      prefix,
      "--to",
      "postgres"
    ])
    expect(moved.status, moved.output).toBe(0)
    expect(moved.output).not.toContain("hidden-password")
    const printed = JSON.parse(moved.output)
    expect(printed.migrated).toMatchObject({ resources: 2, apiKeys: 1, verifications: 25, jobs: 2, reviewTeams: 1 })
    expect(printed.from).toBe(`${testRedisUrl} (prefix ${prefix})`)
    expect(printed.to).toContain(":***@")

    const again = campusgate([
      "migrate",
      "--from",
      "redis",
      "--from-url",
      testRedisUrl,
      "--from-prefix",
      prefix,
      "--to",
      "postgres"
    ])
    expect(again.status).not.toBe(0)
    expect(again.output).toContain("already holds data (API-created resources)")
    expect(again.output).not.toContain("hidden-password")
  }, 60_000)
})
