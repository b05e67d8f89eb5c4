/**
 * Which store a deployment runs on, as the environment and campusgate.yaml
 * together say it: the environment's URLs select the kind, each kind takes
 * only its own URL, and every mistake is a problem naming the variable or
 * the setting, never a daemon started on the wrong store.
 */
import { describe, expect, it } from "vitest"
import { applyEnvironment, type Environment } from "../../src/config/environment.ts"
import type { StoreSettings } from "../../src/config/Settings.ts"
import { defaultSettings } from "../../src/config/settingsFile.ts"
import type { ConfigurationProblem } from "../../src/domain/errors.ts"

const storeOf = (store: Partial<StoreSettings>, env: Environment) => {
  const problems: Array<ConfigurationProblem> = []
  const settings = applyEnvironment(
    { ...defaultSettings(), store: { ...defaultSettings().store, ...store } },
    env,
    problems
  )
  return { store: settings.store, problems: problems.map((problem) => `${problem.path}: ${problem.message}`) }
}

const PG = "postgres://campusgate:secret@db.internal:5432/campusgate"
const REDIS = "redis://cache.internal:6379"

describe("the store the environment and the settings select", () => {
  it("files by default; CAMPUSGATE_REDIS_URL selects Redis, CAMPUSGATE_DATABASE_URL PostgreSQL", () => {
    expect(storeOf({}, {}).store.kind).toBe("files")
    expect(storeOf({}, { CAMPUSGATE_REDIS_URL: REDIS })).toMatchObject({
      store: { kind: "redis", url: REDIS },
      problems: []
    })
    expect(storeOf({}, { CAMPUSGATE_DATABASE_URL: PG })).toMatchObject({
      store: { kind: "postgres", url: PG },
      problems: []
    })
  })

  it("both URLs: records in PostgreSQL, the Redis server as its cache", () => {
    expect(storeOf({}, { CAMPUSGATE_DATABASE_URL: PG, CAMPUSGATE_REDIS_URL: REDIS })).toMatchObject({
      store: { kind: "postgres", url: PG, cache: "redis", cacheUrl: REDIS },
      problems: []
    })
    // From campusgate.yaml alone, and with the environment's Redis as the cache.
    expect(storeOf({ kind: "postgres", url: PG, cache: "redis", cacheUrl: REDIS }, {}).problems).toEqual([])
    expect(storeOf({ kind: "postgres", url: PG }, { CAMPUSGATE_REDIS_URL: REDIS }).store).toMatchObject({
      kind: "postgres",
      cacheUrl: REDIS
    })
  })

  it("refuses a kind without its URL, a URL of another kind, a bad variable and a cache without its server", () => {
    expect(storeOf({ kind: "postgres" }, {}).problems).toEqual([
      "store.url: store.kind is postgres: set store.url in campusgate.yaml or CAMPUSGATE_DATABASE_URL"
    ])
    expect(storeOf({ kind: "postgres", url: REDIS }, {}).problems).toEqual([
      "store.url: store.kind is postgres: expected a postgres:// or postgresql:// URL"
    ])
    expect(storeOf({ kind: "redis", url: PG }, {}).problems).toEqual([
      "store.url: store.kind is redis: expected a redis:// or rediss:// URL"
    ])
    expect(storeOf({}, { CAMPUSGATE_DATABASE_URL: "mysql://x" }).problems).toContain(
      "CAMPUSGATE_DATABASE_URL: expected a postgres:// or postgresql:// URL"
    )
    expect(storeOf({ kind: "postgres", url: PG, cache: "redis" }, {}).problems).toEqual([
      "store.cacheUrl: store.cache is redis: set store.cacheUrl in campusgate.yaml or CAMPUSGATE_REDIS_URL"
    ])
    expect(storeOf({ kind: "redis", url: REDIS, cache: "redis", cacheUrl: REDIS }, {}).problems).toEqual([
      "store.cache: store.cache is for store.kind: postgres"
    ])
    expect(storeOf({ kind: "postgres", url: PG, tls: { certFile: "client.pem" } }, {}).problems).toEqual([
      "store.tls.keyFile: a client certificate needs both store.tls.certFile and store.tls.keyFile"
    ])
  })
})
