/**
 * `campusgate.yaml`: deploy-wide settings — the HTTP server, limits, the
 * data directory, extra institution datasets, teams, rate limits, jobs,
 * statistics and logging. Every field has a default, so an empty file (or
 * none) is a working configuration. Relative paths resolve against the
 * config directory. Deploy-time values can be overridden from the
 * environment (`environment.ts`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { TeamId } from "../domain/Identifiers.ts"

const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value as never)))

const PositiveInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0, { message: "a whole number above 0" })))
const Port = Schema.Int.pipe(
  Schema.check(
    Schema.isBetween({ minimum: 0, maximum: 65535 }, { message: "a port number, 0-65535 (0 picks a free port)" })
  )
)

export const Team = Schema.Struct({
  id: TeamId,
  name: Schema.optionalKey(Schema.String)
})
export type Team = typeof Team.Type

export const RateLimit = Schema.Struct({
  /** Requests allowed per window, per API key. */
  requests: PositiveInt,
  windowSeconds: withDefault(PositiveInt, 60)
})
export type RateLimit = typeof RateLimit.Type

export const Settings = Schema.Struct({
  server: withDefault(
    Schema.Struct({
      host: withDefault(Schema.String, "0.0.0.0"),
      port: withDefault(Port, 8080),
      /** Largest request body accepted, in bytes (bulk-async uploads have their own limit). */
      maxBodyBytes: withDefault(PositiveInt, 2 * 1024 * 1024),
      /** How long a graceful shutdown waits for in-flight requests. */
      shutdownTimeoutSeconds: withDefault(PositiveInt, 10),
      /** A connection on which nothing moves for this long while a request is open (a stalled body) is dropped. */
      bodyTimeoutSeconds: withDefault(PositiveInt, 30),
      /** The longest a request's headers may take to arrive. */
      headersTimeoutSeconds: withDefault(PositiveInt, 60),
      /** The longest a whole request, headers and body, may take to arrive (job uploads included). */
      requestTimeoutSeconds: withDefault(PositiveInt, 300)
    }),
    {}
  ),
  /**
   * Where API-created resources, usage statistics and jobs live. Absent: the
   * `--data` flag, `CAMPUSGATE_DATA`, or `./data` in the working directory.
   */
  dataDir: Schema.optionalKey(Schema.String),
  /** Known teams: every target group, offer and key must name one of them. */
  teams: withDefault(Schema.Array(Team), []),
  /** Institution datasets merged on top of the built-in index (Hipo JSON, CSV or YAML). */
  datasets: withDefault(Schema.Array(Schema.String), []),
  limits: withDefault(
    Schema.Struct({
      bulkMaxEmails: withDefault(PositiveInt, 1000),
      jobMaxEmails: withDefault(PositiveInt, 1_000_000),
      jobMaxBodyBytes: withDefault(PositiveInt, 256 * 1024 * 1024),
      jobUploadsPerKey: withDefault(PositiveInt, 4),
      /** API-created target groups and offers a team may hold together (those in the config directory do not count). */
      resourcesPerTeam: withDefault(PositiveInt, 1000)
    }),
    {}
  ),
  rateLimits: withDefault(
    Schema.Struct({
      /** Bulk and bulk-async validation, batch offer processing (the spec: 10 per minute). */
      bulk: withDefault(RateLimit, { requests: 10, windowSeconds: 60 }),
      /** Single validations. */
      validate: withDefault(RateLimit, { requests: 6000, windowSeconds: 60 }),
      /** Everything else (reads and writes of offers, target groups, jobs). */
      default: withDefault(RateLimit, { requests: 1200, windowSeconds: 60 })
    }),
    {}
  ),
  jobs: withDefault(
    Schema.Struct({
      /** Jobs processed at once. */
      concurrency: withDefault(PositiveInt, 2),
      /** Jobs waiting beyond this answer 503. */
      maxQueued: withDefault(PositiveInt, 100),
      /** How long finished jobs and their results are kept. */
      retentionHours: withDefault(PositiveInt, 24 * 7),
      /**
       * Where job callbacks may go. By default only to public addresses: a callback URL whose host is or
       * resolves to a loopback, private, link-local or reserved address is refused (400) and never called.
       */
      callbacks: withDefault(
        Schema.Struct({
          /** Allow receivers on private networks too (inside the same cluster). */
          allowPrivateNetworks: withDefault(Schema.Boolean, false),
          /** Host names (or IP addresses) callbacks may reach whatever they resolve to. */
          allowHosts: withDefault(Schema.Array(Schema.String), [])
        }),
        {}
      )
    }),
    {}
  ),
  statistics: withDefault(
    Schema.Struct({
      /** Count validations against offers (usage statistics); off: `usage` stays empty. */
      enabled: withDefault(Schema.Boolean, true),
      /** Usage counters are written to the data directory this often (a crash loses at most this much). */
      flushIntervalMs: withDefault(PositiveInt, 1000)
    }),
    {}
  ),
  logging: withDefault(
    Schema.Struct({
      level: withDefault(Schema.Literals(["debug", "info", "warn", "error"]), "info"),
      /** Write full email addresses in logs (off: only their domain). */
      logEmails: withDefault(Schema.Boolean, false)
    }),
    {}
  )
})
export type Settings = typeof Settings.Type
export type SettingsInput = typeof Settings.Encoded
