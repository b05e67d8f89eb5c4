/**
 * The resource store's Redis adapter: one hash per kind
 * (`<prefix>resources:<kind>`, id → YAML document), so every daemon sharing
 * the server reads the same documents. A write or removal bumps the
 * configuration version, records the item in the change feed and
 * announces it in the same script (`store/redisConfigVersion.ts`), so the
 * other daemons apply it within a second. A failure is a `ResourceStoreError` (503) and changed nothing.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import { hashEntries, type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { announceItemLua, configVersionKeys } from "../store/redisConfigVersion.ts"
import type { ResourceDocument, ResourceKind } from "./ResourceDocument.ts"
import { ResourceStore, ResourceStoreError } from "./ResourceStore.ts"

/**
 * A write (unconditional, or only over the expected text: `expect` is
 * "any", "none" or "text") or a removal, and the announcement, in one
 * script: the comparison and the write cannot be interleaved by another
 * daemon. Answers 1 when it changed something.
 */
const change = Redis.script(
  (
    hash: string,
    version: string,
    changes: string,
    channel: string,
    operation: "write" | "remove",
    id: string,
    text: string,
    expect: "any" | "none" | "text",
    expected: string,
    item: string
  ) => [hash, version, changes, channel, operation, id, text, expect, expected, item],
  {
    numberOfKeys: 3,
    lua: `
local hash, id = KEYS[1], ARGV[3]
if ARGV[2] == 'write' then
  if ARGV[5] ~= 'any' then
    local current = redis.call('HGET', hash, id)
    if ARGV[5] == 'none' and current ~= false then return 0 end
    if ARGV[5] == 'text' and current ~= ARGV[6] then return 0 end
  end
  redis.call('HSET', hash, id, ARGV[4])
elseif redis.call('HDEL', hash, id) == 0 then return 0 end
${announceItemLua({ version: "KEYS[2]", changes: "KEYS[3]", channel: "ARGV[1]", item: "ARGV[7]" })}
return 1`
  }
)

/** The adapter's service over the connection in force. */
const makeRedisResourceStore = Effect.gen(function* () {
  const redis = yield* Redis.Redis
  const prefix = yield* RedisKeyPrefix
  const { version, channel, changes } = configVersionKeys(prefix)
  const hashOf = (kind: ResourceKind) => redisKey(prefix, "resources", kind)
  const documentOf = (kind: ResourceKind, id: string, text: string): ResourceDocument => ({
    kind,
    id,
    location: `redis:${hashOf(kind)}/${id}`,
    text
  })
  const run = redis.eval(change)
  const fail = (operation: ResourceStoreError["operation"], id?: string) => (error: Redis.RedisError) =>
    new ResourceStoreError({ operation, ...(id === undefined ? {} : { id }), cause: error.cause })
  return {
    list: (kind: ResourceKind) =>
      redis.send("HGETALL", hashOf(kind)).pipe(
        Effect.map((reply) =>
          [...hashEntries(reply)].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, text]) => documentOf(kind, id, text))
        ),
        Effect.mapError(fail("list"))
      ),
    read: (kind: ResourceKind, id: string) =>
      redis.send<string | null>("HGET", hashOf(kind), id).pipe(
        Effect.map((text) => (text === null ? undefined : documentOf(kind, id, text))),
        Effect.mapError(fail("read", id))
      ),
    write: (kind: ResourceKind, id: string, text: string, expected?: string | null) =>
      run(
        hashOf(kind),
        version,
        changes,
        channel,
        "write",
        id,
        text,
        expected === undefined ? "any" : expected === null ? "none" : "text",
        expected ?? "",
        `${kind}:${id}`
      ).pipe(
        Effect.map((changed) => Number(changed) === 1),
        Effect.mapError(fail("write", id))
      ),
    remove: (kind: ResourceKind, id: string) =>
      Effect.asVoid(run(hashOf(kind), version, changes, channel, "remove", id, "", "any", "", `${kind}:${id}`)).pipe(
        Effect.mapError(fail("remove", id))
      )
  }
})

/** One hash per kind on the shared Redis server; a change makes every daemon reload. */
export const layerRedis: Layer.Layer<ResourceStore, never, RedisConnection> = Layer.effect(
  ResourceStore,
  Effect.suspend(() => Effect.map(makeRedisResourceStore, ResourceStore.of))
)
