/**
 * The Redis connection every Redis adapter shares: Effect's `Redis` service
 * (`effect/persistence/Redis`) over `@effect/platform-node`'s `NodeRedis`
 * (the `redis` package), plus the key prefix of the deployment.
 *
 * What the daemon promises when Redis goes away is set here:
 * - a command fails at once while the connection is down (no offline
 *   queue) and after `COMMAND_TIMEOUT_MS` when the server stalls (every
 *   command of the `Redis` and `NodeRedis` services is bounded), and fails
 *   as a store outage (`store/outage.ts`), so a request that needs shared
 *   state answers 503 instead of hanging or answering 500;
 * - after a command has timed out, the server counts as stalled (the
 *   connection's breaker, `store/breaker.ts`, given as `RedisBreaker`):
 *   every command fails at once, so nothing waits the timeout again, until
 *   a probe (`PING`) is answered;
 * - once connected, the client reconnects for ever with capped backoff (no
 *   restart needed; the first connection must succeed, so a daemon with a
 *   wrong URL stops at start with the reason);
 * - pub/sub subscribers reconnect and re-subscribe on their own.
 */
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import { type Breaker, makeBreaker } from "./breaker.ts"
import { markOutage } from "./outage.ts"
import { type TlsMaterial, tlsOptions } from "./tlsMaterial.ts"

export { Redis, RedisError } from "effect/persistence/Redis"

/** The longest a command may take before it fails (the store then counts as down). */
export const COMMAND_TIMEOUT_MS = 2000
/** The longest wait between two reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 1000

/** The prefix of every key this deployment writes (`store.keyPrefix`). */
export const RedisKeyPrefix = Context.Reference<string>("campusgate/store/RedisKeyPrefix", {
  defaultValue: () => "campusgate:"
})

export interface RedisOptions {
  readonly url: string
  readonly keyPrefix: string
  /** A private CA or a client certificate (`store.tls`); the connection is TLS with it, as with `rediss://`. */
  readonly tls?: TlsMaterial | undefined
}

/** A Redis command that failed: the store is down or stalled, an outage (`store/outage.ts`), not a bug. */
class RedisOutage extends Redis.RedisError {}
markOutage(RedisOutage)

/** The breaker of the Redis connection (`store/breaker.ts`), given with it. */
export class RedisBreaker extends Context.Service<RedisBreaker, Breaker<Redis.RedisError>>()(
  "campusgate/store/RedisBreaker"
) {}

/**
 * Redis Cluster is refused at start, with what to use instead: the
 * adapters' scripts and transactions touch several keys that Cluster would
 * spread over slots (and this client does not follow `MOVED`). A primary
 * with replicas behind Sentinel, or a managed single-shard Redis, works:
 * give the URL of the current primary (or a proxy that follows failover).
 */
const refuseCluster = (redis: Redis.Redis["Service"]) =>
  Effect.flatMap(
    Effect.orElseSucceed(redis.send<string>("INFO", "cluster"), () => ""),
    (info) =>
      /cluster_enabled:1/.test(info)
        ? Effect.fail(
            new Redis.RedisError({
              cause: new Error(
                "This Redis server runs in cluster mode, which Campusgate does not support (its stores use multi-key scripts in one slot). Use a single Redis primary (with replicas and Sentinel for failover, giving the primary's or a failover proxy's URL), or store.kind: postgres."
              )
            })
          )
        : Effect.void
  )

/** `Redis` (and `NodeRedis`) over one client; building it connects, or fails. */
export const redisLayer = (
  options: RedisOptions
): Layer.Layer<Redis.Redis | NodeRedis.NodeRedis | RedisBreaker, Redis.RedisError> => {
  // Until the first connection succeeds a failure is final (a wrong URL stops the start); after it, retry for ever.
  let connected = false
  const client = NodeRedis.layer({
    url: options.url,
    disableOfflineQueue: true,
    socket: {
      ...(options.tls === undefined ? {} : { tls: true as const, ...tlsOptions(options.tls) }),
      connectTimeout: COMMAND_TIMEOUT_MS,
      reconnectStrategy: (retries: number, cause: Error) =>
        connected ? Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100) : cause
    },
    // Reserved connections (blocking reads) are few: none are used today.
    maxConnections: 4
  }).pipe(
    Layer.tap(() =>
      Effect.sync(() => {
        connected = true
      })
    )
  )
  // The same services, every command bounded in time, behind one breaker probed in the background.
  const bounds = Layer.effectContext(
    Effect.gen(function* () {
      const redis = yield* Redis.Redis
      const node = yield* NodeRedis.NodeRedis
      yield* refuseCluster(redis)
      const breaker = yield* makeBreaker<Redis.RedisError>({
        store: "Redis",
        timeoutMs: COMMAND_TIMEOUT_MS,
        probe: redis.send("PING"),
        outage: (cause) => new RedisOutage({ cause }),
        asOutage: (effect) =>
          Effect.mapError(effect, (error) =>
            error instanceof RedisOutage
              ? error
              : new RedisOutage({ cause: error instanceof Redis.RedisError ? error.cause : error })
          )
      })
      const { bounded } = breaker
      return Context.make(
        Redis.Redis,
        Redis.Redis.of({
          ...redis,
          send: (command, ...args) => bounded(redis.send(command, ...args)),
          eval:
            (script) =>
            (...params) =>
              bounded(redis.eval(script)(...params))
        })
      ).pipe(
        Context.add(NodeRedis.NodeRedis, NodeRedis.NodeRedis.of({ ...node, use: (f) => bounded(node.use(f)) })),
        Context.add(RedisBreaker, breaker)
      )
    })
  )
  return bounds.pipe(Layer.provide(client))
}

/**
 * The connection every Redis adapter is given (its `layerRedis` needs it):
 * Effect's `Redis` service and, for bytes on the wire, `NodeRedis`, over one
 * client. The key prefix comes with it (`RedisKeyPrefix`).
 */
export type RedisConnection = Redis.Redis | NodeRedis.NodeRedis | RedisBreaker

/** The connection and the prefix, as the adapters need them. */
export const redisStoreLayer = (options: RedisOptions): Layer.Layer<RedisConnection, Redis.RedisError> =>
  Layer.merge(redisLayer(options), Layer.succeed(RedisKeyPrefix, options.keyPrefix))

/** The key `name` under the deployment's prefix. */
export const redisKey = (prefix: string, ...parts: ReadonlyArray<string>): string => `${prefix}${parts.join(":")}`

/** `text` as a literal inside a `SCAN MATCH` pattern. */
const globEscaped = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&")

/** Every key of `redis` that starts with `prefix`, a `SCAN` page at a time, each non-empty page handed to `use`. */
export const eachKeyPage = <E, R>(
  redis: Redis.Redis["Service"],
  prefix: string,
  use: (keys: ReadonlyArray<string>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | Redis.RedisError, R> =>
  Effect.gen(function* () {
    let cursor = "0"
    do {
      const [next, keys] = yield* redis.send<[string, Array<string>]>(
        "SCAN",
        cursor,
        "MATCH",
        `${globEscaped(prefix)}*`,
        "COUNT",
        "1000"
      )
      cursor = next
      if (keys.length > 0) yield* use(keys)
    } while (cursor !== "0")
  })

/** Pairs of a flat `HGETALL` reply as a map. */
export const hashEntries = (reply: unknown): Map<string, string> => {
  const entries = new Map<string, string>()
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) entries.set(String(reply[i]), String(reply[i + 1]))
  } else if (reply !== null && typeof reply === "object") {
    for (const [field, value] of Object.entries(reply as Record<string, unknown>)) entries.set(field, String(value))
  }
  return entries
}
