/**
 * Deploy-time overrides from the environment, the usual `CAMPUSGATE_...`
 * names: they win over `campusgate.yaml` so one config repository can serve
 * several deployments. Secrets live only here, never in files.
 *
 * | Variable                     | Overrides                |
 * |------------------------------|--------------------------|
 * | `CAMPUSGATE_CONFIG`          | the config directory (CLI flag `--config` wins) |
 * | `CAMPUSGATE_DATA`            | `dataDir` (CLI flag `--data` wins) |
 * | `CAMPUSGATE_HOST`            | `server.host`            |
 * | `CAMPUSGATE_PORT`            | `server.port`            |
 * | `PORT`                       | `server.port` when `CAMPUSGATE_PORT` is not set (what platforms set) |
 * | `CAMPUSGATE_MAX_BODY_BYTES`  | `server.maxBodyBytes`    |
 * | `CAMPUSGATE_LOG_LEVEL`       | `logging.level`          |
 * | `CAMPUSGATE_REDIS_URL`       | `store.url`, and selects `store.kind: redis`; with `store.kind: postgres`, `store.cacheUrl` and `store.cache: redis` |
 * | `CAMPUSGATE_DATABASE_URL`    | `store.url`, and selects `store.kind: postgres` |
 * | `CAMPUSGATE_WEBHOOK_SECRET`  | secret for signing job webhooks |
 * | `CAMPUSGATE_STATS_SECRET`    | key for hashing emails counted as unique in usage statistics |
 * | `CAMPUSGATE_VERIFICATION_SECRET` | key for the hashes and sealed addresses of verifications |
 * | `CAMPUSGATE_SMTP_PASSWORD`   | the password of `verification.mail.smtp.user` |
 * | `CAMPUSGATE_CONSOLE_SECRET`  | key for signing console sessions (default: generated once per data directory or Redis) |
 * | `CAMPUSGATE_CONSOLE_DIR`     | where the console's built files are (default: the package's `dist/console/`) |
 */
import type { ConfigurationProblem } from "../domain/errors.ts"
import {
  POSTGRES_PROTOCOLS,
  POSTGRES_URL_EXPECTED,
  REDIS_PROTOCOLS,
  REDIS_URL_EXPECTED,
  urlOf
} from "../domain/urls.ts"
import type { Settings } from "./Settings.ts"

export type Environment = Readonly<Record<string, string | undefined>>

/** Secrets read from the environment (absent: generated per data directory by the component that needs one). */
export interface Secrets {
  readonly webhookSecret: string | undefined
  readonly statsSecret: string | undefined
  readonly verificationSecret: string | undefined
  readonly smtpPassword: string | undefined
  readonly consoleSecret: string | undefined
}

const logLevels = ["debug", "info", "warn", "error"] as const

const integer = (
  env: Environment,
  name: string,
  min: number,
  max: number,
  problems: Array<ConfigurationProblem>
): number | undefined => {
  const raw = env[name]
  if (raw === undefined || raw === "") return undefined
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    problems.push({ file: "environment", path: name, message: `expected a whole number ${min}-${max}, got "${raw}"` })
    return undefined
  }
  return value
}

/** `settings` with the environment's overrides applied, or the problems with them. */
export const applyEnvironment = (
  settings: Settings,
  env: Environment,
  problems: Array<ConfigurationProblem>
): Settings => {
  // Platforms (Heroku, Cloud Run, Render, ...) say where to listen in PORT; the specific name wins.
  const portName = env.CAMPUSGATE_PORT === undefined || env.CAMPUSGATE_PORT === "" ? "PORT" : "CAMPUSGATE_PORT"
  const port = integer(env, portName, 0, 65535, problems)
  const maxBodyBytes = integer(env, "CAMPUSGATE_MAX_BODY_BYTES", 1, 2 ** 40, problems)
  const host = env.CAMPUSGATE_HOST
  const level = env.CAMPUSGATE_LOG_LEVEL
  let logLevel: Settings["logging"]["level"] | undefined
  if (level !== undefined && level !== "") {
    logLevel = logLevels.find((candidate) => candidate === level.toLowerCase())
    if (logLevel === undefined) {
      problems.push({
        file: "environment",
        path: "CAMPUSGATE_LOG_LEVEL",
        message: `expected one of ${logLevels.join(", ")}, got "${level}"`
      })
    }
  }
  const store = storeOf(settings.store, env, problems)
  return {
    ...settings,
    store,
    server: {
      ...settings.server,
      ...(host !== undefined && host !== "" ? { host } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {})
    },
    logging: { ...settings.logging, ...(logLevel !== undefined ? { level: logLevel } : {}) }
  }
}

const given = (value: string | undefined): string | undefined =>
  value === undefined || value === "" ? undefined : value

/**
 * The store settings with the environment's URLs: CAMPUSGATE_DATABASE_URL
 * selects PostgreSQL; CAMPUSGATE_REDIS_URL selects Redis, or with
 * PostgreSQL the Redis cache; and the URL must be the kind's.
 */
const storeOf = (
  settings: Settings["store"],
  env: Environment,
  problems: Array<ConfigurationProblem>
): Settings["store"] => {
  const databaseUrl = given(env.CAMPUSGATE_DATABASE_URL)
  const redisUrl = given(env.CAMPUSGATE_REDIS_URL)
  if (databaseUrl !== undefined && urlOf(databaseUrl, POSTGRES_PROTOCOLS) === null)
    problems.push({
      file: "environment",
      path: "CAMPUSGATE_DATABASE_URL",
      message: `expected ${POSTGRES_URL_EXPECTED}`
    })
  if (redisUrl !== undefined && urlOf(redisUrl, REDIS_PROTOCOLS) === null)
    problems.push({ file: "environment", path: "CAMPUSGATE_REDIS_URL", message: `expected ${REDIS_URL_EXPECTED}` })
  const postgres = databaseUrl !== undefined || settings.kind === "postgres"
  const store: Settings["store"] = postgres
    ? {
        ...settings,
        kind: "postgres",
        ...(databaseUrl !== undefined ? { url: databaseUrl } : {}),
        ...(redisUrl !== undefined ? { cache: "redis" as const, cacheUrl: redisUrl } : {})
      }
    : redisUrl !== undefined
      ? { ...settings, kind: "redis", url: redisUrl }
      : settings
  const [protocols, expected, variable] =
    store.kind === "postgres"
      ? [POSTGRES_PROTOCOLS, POSTGRES_URL_EXPECTED, "CAMPUSGATE_DATABASE_URL"]
      : [REDIS_PROTOCOLS, REDIS_URL_EXPECTED, "CAMPUSGATE_REDIS_URL"]
  if (store.kind !== "files" && store.url === undefined) {
    problems.push({
      file: "environment",
      path: "store.url",
      message: `store.kind is ${store.kind}: set store.url in campusgate.yaml or ${variable}`
    })
  } else if (store.kind !== "files" && store.url !== undefined && urlOf(store.url, protocols) === null) {
    problems.push({
      file: "environment",
      path: "store.url",
      message: `store.kind is ${store.kind}: expected ${expected}`
    })
  }
  if ((store.tls?.certFile === undefined) !== (store.tls?.keyFile === undefined))
    problems.push({
      file: "environment",
      path: store.tls?.certFile === undefined ? "store.tls.certFile" : "store.tls.keyFile",
      message: "a client certificate needs both store.tls.certFile and store.tls.keyFile"
    })
  if (store.cache === "redis" && store.kind !== "postgres")
    problems.push({ file: "environment", path: "store.cache", message: "store.cache is for store.kind: postgres" })
  if (store.cache === "redis" && store.cacheUrl === undefined)
    problems.push({
      file: "environment",
      path: "store.cacheUrl",
      message: "store.cache is redis: set store.cacheUrl in campusgate.yaml or CAMPUSGATE_REDIS_URL"
    })
  return store
}

export const secretsFrom = (env: Environment): Secrets => ({
  webhookSecret: env.CAMPUSGATE_WEBHOOK_SECRET || undefined,
  statsSecret: env.CAMPUSGATE_STATS_SECRET || undefined,
  verificationSecret: env.CAMPUSGATE_VERIFICATION_SECRET || undefined,
  smtpPassword: env.CAMPUSGATE_SMTP_PASSWORD || undefined,
  consoleSecret: env.CAMPUSGATE_CONSOLE_SECRET || undefined
})
