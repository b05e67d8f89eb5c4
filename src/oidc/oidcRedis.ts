/**
 * The OpenID Connect store's Redis adapter, shared by every daemon: an entry
 * is a JSON string (`<prefix>oidc:<model>:<id>`) expiring by itself; its
 * consumption a marker beside it (`…:consumed`), set with `SET NX` for the
 * entry's remaining lifetime, so of two daemons redeeming one code only one
 * succeeds, and the entry's JSON is never decoded and re-encoded in Lua
 * (where an empty array would come back an object). A grant's entries are
 * listed in a set (`<prefix>oidc:grant:<grantId>`) that lives as long as
 * its longest entry; a session's `uid` names its id (`<prefix>oidc:uid:<uid>`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import { type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { OidcStore, OidcStoreError, type OidcStoreService, SESSION_MODEL } from "./OidcStore.ts"

/** KEYS: entry, its consumed marker, its grant's set, the uid index; ARGV: payload, lifetime ms (0: none), grant? ('1'), session id (''). */
const upsertScript = Redis.script(
  (
    ...args: [
      entry: string,
      consumed: string,
      grant: string,
      uid: string,
      payload: string,
      ttlMs: string,
      hasGrant: string,
      sessionId: string
    ]
  ) => args,
  {
    numberOfKeys: 4,
    lua: `
local ttl = tonumber(ARGV[2])
if ttl > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl) else redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('DEL', KEYS[2])
if ARGV[3] == '1' then
  local existed = redis.call('EXISTS', KEYS[3])
  local current = redis.call('PTTL', KEYS[3])
  redis.call('SADD', KEYS[3], KEYS[1])
  if ttl == 0 then redis.call('PERSIST', KEYS[3])
  elseif existed == 0 or (current >= 0 and current < ttl) then redis.call('PEXPIRE', KEYS[3], ttl) end
end
if ARGV[4] ~= '' then
  if ttl > 0 then redis.call('SET', KEYS[4], ARGV[4], 'PX', ttl) else redis.call('SET', KEYS[4], ARGV[4]) end
end
return 1`
  }
)

/** KEYS: entry, its consumed marker; ARGV: now (epoch s): 1 when this call consumed it. */
const consumeScript = Redis.script((...args: [entry: string, consumed: string, now: string]) => args, {
  numberOfKeys: 2,
  lua: `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
local taken
if ttl == -1 then taken = redis.call('SET', KEYS[2], ARGV[1], 'NX') else taken = redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ttl) end
if taken then return 1 end
return 0`
}).withReturnType<number>()

/** KEYS: the grant's set: removes its entries, their markers and the set. */
const revokeScript = Redis.script((grant: string) => [grant], {
  numberOfKeys: 1,
  lua: `
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do redis.call('DEL', key, key .. ':consumed') end
redis.call('DEL', KEYS[1])
return 1`
})

const makeRedisOidcStore: Effect.Effect<OidcStoreService, never, Redis.Redis> = Effect.gen(function* () {
  const redis = yield* Redis.Redis
  const prefix = yield* RedisKeyPrefix
  const entryKey = (model: string, id: string) => redisKey(prefix, "oidc", model, id)
  const upsert = redis.eval(upsertScript)
  const consume = redis.eval(consumeScript)
  const revoke = redis.eval(revokeScript)
  const fail = (operation: OidcStoreError["operation"]) =>
    Effect.mapError((cause: unknown) => new OidcStoreError({ operation, cause }))
  const find = (model: string, id: string) =>
    redis.send<Array<string | null>>("MGET", entryKey(model, id), `${entryKey(model, id)}:consumed`).pipe(
      Effect.map(([payload, consumed]) => {
        if (payload === null || payload === undefined) return undefined
        const decoded = JSON.parse(payload) as Record<string, unknown>
        return consumed === null || consumed === undefined ? decoded : { ...decoded, consumed: Number(consumed) }
      }),
      fail("find")
    )
  return {
    upsert: (model, id, payload, expiresInSeconds) => {
      const key = entryKey(model, id)
      const grantId = typeof payload.grantId === "string" ? payload.grantId : undefined
      const uid = model === SESSION_MODEL && typeof payload.uid === "string" ? payload.uid : undefined
      return upsert(
        key,
        `${key}:consumed`,
        redisKey(prefix, "oidc", "grant", grantId ?? ""),
        redisKey(prefix, "oidc", "uid", uid ?? ""),
        JSON.stringify(payload),
        String(expiresInSeconds === undefined ? 0 : Math.max(1, Math.ceil(expiresInSeconds * 1000))),
        grantId === undefined ? "0" : "1",
        uid === undefined ? "" : id
      ).pipe(Effect.asVoid, fail("upsert"))
    },
    find,
    findSessionByUid: (uid) =>
      redis.send<string | null>("GET", redisKey(prefix, "oidc", "uid", uid)).pipe(
        fail("find"),
        Effect.flatMap((id) => (id === null ? Effect.succeed(undefined) : find(SESSION_MODEL, id)))
      ),
    consume: (model, id) =>
      consume(entryKey(model, id), `${entryKey(model, id)}:consumed`, String(Math.floor(Date.now() / 1000))).pipe(
        Effect.map((taken) => taken === 1),
        fail("consume")
      ),
    destroy: (model, id) =>
      redis.send("DEL", entryKey(model, id), `${entryKey(model, id)}:consumed`).pipe(Effect.asVoid, fail("destroy")),
    revokeByGrantId: (grantId) => revoke(redisKey(prefix, "oidc", "grant", grantId)).pipe(Effect.asVoid, fail("revoke"))
  }
})

/** The store on the shared Redis server. */
export const layerRedis: Layer.Layer<OidcStore, never, RedisConnection> = Layer.effect(OidcStore, makeRedisOidcStore)
