/**
 * `campusgate.yaml`: deploy-wide settings — the HTTP server, limits, the
 * data directory, extra institution datasets, teams, rate limits, jobs,
 * statistics, logging, verification (proof of ownership: defaults of
 * the offers' policies, mail, token signing) and the operator console. Every field has a default, so an empty file (or
 * none) is a working configuration. Relative paths resolve against the
 * config directory. Deploy-time values can be overridden from the
 * environment (`environment.ts`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { TeamId } from "../domain/Identifiers.ts"
import {
  HTTP_PROTOCOLS,
  POSTGRES_PROTOCOLS,
  POSTGRES_URL_EXPECTED,
  REDIS_PROTOCOLS,
  REDIS_URL_EXPECTED,
  UrlOf,
  urlOf
} from "../domain/urls.ts"
import { Period, verificationDefaultFields } from "../domain/VerificationPolicy.ts"

const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value as never)))

const PositiveInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0, { message: "a whole number above 0" })))
const NonNegativeInt = Schema.Int.pipe(
  Schema.check(Schema.isGreaterThanOrEqualTo(0, { message: "a whole number, 0 or above" }))
)
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

/** Where verification messages go: an SMTP server, or without one the outbox directory. */
export const MailSettings = Schema.Struct({
  /** The sender, e.g. `Acme Student Offers <offers@acme.example>`. */
  from: withDefault(Schema.NonEmptyString, "Campusgate <no-reply@localhost>"),
  /** Absent: each message is written as an .eml file to `outboxDir` (a log line says where). */
  smtp: Schema.optionalKey(
    Schema.Struct({
      host: Schema.NonEmptyString,
      port: withDefault(Port, 587),
      /** `starttls` (upgrade required), `tls` (implicit TLS, port 465) or `none` (loopback and tests only). */
      security: withDefault(Schema.Literals(["starttls", "tls", "none"]), "starttls"),
      /** The user to log in as; the password comes from CAMPUSGATE_SMTP_PASSWORD. */
      user: Schema.optionalKey(Schema.NonEmptyString),
      /** A PEM file of certificate authorities to trust besides the system's (relative to the config directory). */
      ca: Schema.optionalKey(Schema.NonEmptyString)
    })
  ),
  /** Where messages are written without SMTP, relative to the config directory; default `<data>/outbox`. */
  outboxDir: Schema.optionalKey(Schema.NonEmptyString),
  /** Messages sent at once. */
  concurrency: withDefault(PositiveInt, 4),
  /** Messages waiting beyond this refuse new verifications with 503. */
  maxQueued: withDefault(PositiveInt, 10_000),
  /**
   * The most messages one mailbox is sent by the whole deployment in
   * `mailboxWindow`, whatever the teams and offers asking (an offer's
   * `maxMessagesPerAddress` cannot raise it).
   */
  maxMessagesPerMailbox: withDefault(PositiveInt, 10),
  mailboxWindow: withDefault(Period, "1 hour")
})
export type MailSettings = typeof MailSettings.Type

export const VerificationSettings = Schema.Struct({
  ...verificationDefaultFields,
  /** The daemon's address as a mail recipient reaches it (links are `<publicUrl>/v/<token>`); absent: where it listens. */
  publicUrl: Schema.optionalKey(
    Schema.String.pipe(
      Schema.check(
        Schema.makeFilter((text: string) =>
          urlOf(text, HTTP_PROTOCOLS)?.search === "" ? true : "an absolute http or https URL without a query"
        )
      )
    )
  ),
  /** The `iss` of eligibility tokens; absent: `publicUrl`, else `campusgate`. */
  issuer: Schema.optionalKey(Schema.NonEmptyString),
  /** How long finished verifications are kept (a verified one also until its token expires and its redemption window ends). */
  retention: withDefault(Period, "30 days"),
  /** How often unfinished work is looked at: verifications expired, notices retried, reminders sent. */
  sweepInterval: withDefault(Period, "30 seconds"),
  mail: withDefault(MailSettings, {}),
  signing: withDefault(
    Schema.Struct({
      /** `EdDSA` (Ed25519) or `ES256` (P-256). */
      algorithm: withDefault(Schema.Literals(["EdDSA", "ES256"]), "EdDSA"),
      /** A new signing key after this long; old keys stay published until their tokens expire. */
      rotateAfter: withDefault(Period, "90 days")
    }),
    {}
  )
})
export type VerificationSettings = typeof VerificationSettings.Type

/** A Redis URL: `redis://` or `rediss://` (TLS), with the password in the URL when there is one. */
const RedisUrl = UrlOf(REDIS_PROTOCOLS, REDIS_URL_EXPECTED)
/** The store's server: a Redis or a PostgreSQL URL (which one `kind` says; `applyEnvironment` checks they agree). */
const StoreUrl = UrlOf(
  [...REDIS_PROTOCOLS, ...POSTGRES_PROTOCOLS],
  `${REDIS_URL_EXPECTED}, or ${POSTGRES_URL_EXPECTED}`
)

/** TLS to the store and its cache beyond the system's trust; files relative to the config directory. */
export const StoreTls = Schema.Struct({
  /** PEM file of the CA (or CAs) that signed the servers' certificates. */
  caFile: Schema.optionalKey(Schema.String),
  /** PEM file of a client certificate, for servers that ask for one (mutual TLS); with `keyFile`. */
  certFile: Schema.optionalKey(Schema.String),
  /** PEM file of the client certificate's private key. */
  keyFile: Schema.optionalKey(Schema.String)
})
export type StoreTls = typeof StoreTls.Type

/**
 * Where shared state lives: `files` (the data directory, one daemon: the
 * embedded default), `redis` (several daemons, or `serve --workers`, share
 * one Redis server; job inputs and results stay in the data directory,
 * which they then share as a volume) or `postgres` (records in one
 * PostgreSQL database; with `cache: redis`, what may be lost — rate-limit
 * counters — in Redis).
 */
export const StoreSettings = Schema.Struct({
  kind: withDefault(Schema.Literals(["files", "redis", "postgres"]), "files"),
  /** The store's server (`kind: redis` or `postgres`); CAMPUSGATE_REDIS_URL / CAMPUSGATE_DATABASE_URL win. */
  url: Schema.optionalKey(StoreUrl),
  /** With `kind: postgres`: `redis` keeps rate-limit counters in Redis (`cacheUrl`) instead of PostgreSQL. */
  cache: Schema.optionalKey(Schema.Literal("redis")),
  /** The Redis server of `cache: redis`; CAMPUSGATE_REDIS_URL wins. */
  cacheUrl: Schema.optionalKey(RedisUrl),
  /** Every key this deployment writes starts with it, so deployments can share a server. */
  keyPrefix: withDefault(Schema.String, "campusgate:"),
  /** A private CA, and a client certificate, for the store's and the cache's TLS connections. */
  tls: Schema.optionalKey(StoreTls),
  /**
   * With `kind: redis` or `postgres`, what a daemon does when the store it
   * remembers comes back empty (restarted without its data, a schema
   * dropped): `refuse` (the default) starts nothing and refuses every store
   * call, with what to do in the log, until a backup is restored;
   * `start-over` makes new signing keys and secrets and goes on (tokens
   * issued before stop verifying, unique-email counts restart).
   */
  whenEmpty: withDefault(Schema.Literals(["refuse", "start-over"]), "refuse")
})
export type StoreSettings = typeof StoreSettings.Type

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
  store: withDefault(StoreSettings, {}),
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
      /** Bulk validation and batch offer processing (the spec: 10 per minute). */
      bulk: withDefault(RateLimit, { requests: 10, windowSeconds: 60 }),
      /** Job submissions (bulk-async): a budget of their own, so a running import never blocks synchronous bulk calls. */
      jobs: withDefault(RateLimit, { requests: 10, windowSeconds: 60 }),
      /** Single validations. */
      validate: withDefault(RateLimit, { requests: 6000, windowSeconds: 60 }),
      /** Everything else (reads and writes of offers, target groups, jobs). */
      default: withDefault(RateLimit, { requests: 1200, windowSeconds: 60 }),
      /** Starting, confirming, resending and cancelling verifications. */
      verifications: withDefault(RateLimit, { requests: 600, windowSeconds: 60 }),
      /** Console sign-ins (an API key exchanged for a session), per client address, whether the key is good or not. */
      signIn: withDefault(RateLimit, { requests: 10, windowSeconds: 60 }),
      /** Form submissions on the hosted verification page (`/verify`), per client address. */
      hostedFlow: withDefault(RateLimit, { requests: 30, windowSeconds: 60 }),
      /**
       * When the shared store (Redis) cannot be reached: `open` counts in each
       * daemon's memory meanwhile (a key may get up to one budget per daemon),
       * `closed` answers 503 until it is back.
       */
      whenStoreDown: withDefault(Schema.Literals(["open", "closed"]), "open")
    }),
    {}
  ),
  jobs: withDefault(
    Schema.Struct({
      /** Jobs processed at once. */
      concurrency: withDefault(PositiveInt, 2),
      /** Jobs waiting beyond this answer 503. */
      maxQueued: withDefault(PositiveInt, 100),
      /**
       * Threads that evaluate jobs beside the one answering requests (each holds its own copy of the
       * engine). Absent: one per available core but one (the request thread's), at least one; 0: jobs are
       * evaluated on the request thread.
       */
      workerThreads: Schema.optionalKey(NonNegativeInt),
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
  /** The institution review queue: unknown domains the teams' traffic met. */
  reviews: withDefault(
    Schema.Struct({
      /** The most undecided domains a team's queue keeps; past it the least met are dropped (and counted). */
      maxDomainsPerTeam: withDefault(PositiveInt, 10000)
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
  ),
  verification: withDefault(VerificationSettings, {}),
  /** The operator console at `/console`. */
  console: withDefault(
    Schema.Struct({
      /** How long a console session lasts after sign-in (never beyond its key's expiry). */
      sessionMinutes: withDefault(PositiveInt, 60)
    }),
    {}
  )
})
export type Settings = typeof Settings.Type
export type SettingsInput = typeof Settings.Encoded
