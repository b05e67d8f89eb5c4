/**
 * The review store's Redis adapter. Per team: a hash of its queue
 * (`<prefix>reviews:queue:<team>`, domain → entry as JSON), a sorted set
 * ranking its undecided domains (`reviews:rank:<team>`, count plus half
 * the candidate score, so by count then score) and the set of its decided
 * domains (`reviews:decided:<team>`); the dropped counts by team
 * (`reviews:dropped`), and the decisions of every team
 * (`reviews:approvals`, `reviews:rejections`: `team/domain` → JSON).
 *
 * A flush is one script (every team of the batch: merge, rank, bound), so
 * daemons flushing together add up; a decision is one script that stores
 * it, removes the other, takes the domain out of the ranking (never
 * dropped) and bumps the configuration version (`store/redisConfigVersion.ts`),
 * so every daemon reloads its approvals within a second. Teams' keys are
 * built inside the scripts from the prefix: one Redis server, not a cluster.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Schema from "effect/Schema"
import { ReviewedInstitution, ReviewRejection } from "../domain/InstitutionReview.ts"
import { eachKeyPage, hashEntries, type RedisConnection, RedisKeyPrefix, redisKey } from "../store/redis.ts"
import { announceLua, configVersionKeys } from "../store/redisConfigVersion.ts"
import { oldestDayKept, type QueueBatch, type QueueEntry, StoredEntry } from "./queueEntries.ts"
import { decisionKey, type RecordOptions, type ReviewDecision, ReviewStore, ReviewStoreError } from "./ReviewStore.ts"

const record = Redis.script(
  (prefix: string, batch: string, max: number, oldest: string) => [prefix, batch, max, oldest],
  {
    numberOfKeys: 0,
    lua: `
local prefix, max, oldest = ARGV[1], tonumber(ARGV[3]), ARGV[4]
for _, t in ipairs(cjson.decode(ARGV[2])) do
  local q = prefix .. 'reviews:queue:' .. t.team
  local r = prefix .. 'reviews:rank:' .. t.team
  local decided = prefix .. 'reviews:decided:' .. t.team
  for _, e in ipairs(t.entries) do
    local current = redis.call('HGET', q, e.domain)
    local m = e
    if current then
      m = cjson.decode(current)
      m.count = m.count + e.count
      m.accepted = m.accepted + e.accepted
      for day, n in pairs(e.days) do m.days[day] = (m.days[day] or 0) + n end
      if e.firstSeen < m.firstSeen then m.firstSeen = e.firstSeen end
      if e.lastSeen >= m.lastSeen then
        m.lastSeen = e.lastSeen
        m.candidate = e.candidate
      end
    end
    for day, _ in pairs(m.days) do if day < oldest then m.days[day] = nil end end
    redis.call('HSET', q, e.domain, cjson.encode(m))
    if redis.call('SISMEMBER', decided, e.domain) == 0 then
      redis.call('ZADD', r, m.count + m.candidate.score * 0.5, e.domain)
    end
  end
  local dropped = t.dropped
  local over = redis.call('ZCARD', r) - max
  if over > 0 then
    local gone = redis.call('ZPOPMIN', r, over)
    for i = 1, #gone, 2 do redis.call('HDEL', q, gone[i]) end
    dropped = dropped + over
  end
  if dropped > 0 then redis.call('HINCRBY', prefix .. 'reviews:dropped', t.team, dropped) end
end
return 1`
  }
)

const decide = Redis.script(
  (
    approvals: string,
    rejections: string,
    decided: string,
    rank: string,
    version: string,
    channel: string,
    kind: "approve" | "reject",
    key: string,
    json: string,
    domain: string
  ) => [approvals, rejections, decided, rank, version, channel, kind, key, json, domain],
  {
    numberOfKeys: 5,
    lua: `
if ARGV[2] == 'approve' then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('HDEL', KEYS[1], ARGV[3])
end
redis.call('SADD', KEYS[3], ARGV[5])
redis.call('ZREM', KEYS[4], ARGV[5])
${announceLua.replaceAll("KEYS[1]", "KEYS[5]")}
return 1`
  }
)

const decodeEntry = Schema.decodeUnknownSync(Schema.fromJsonString(StoredEntry))
const decodeApproval = Schema.decodeUnknownSync(Schema.fromJsonString(ReviewedInstitution))
const decodeRejection = Schema.decodeUnknownSync(Schema.fromJsonString(ReviewRejection))

/** An entry as read: Lua's cjson writes an empty table as `{}` and may write the days as a list when empty. */
const entryOf = (text: string): QueueEntry => {
  const entry = decodeEntry(text)
  return { ...entry, days: { ...entry.days } }
}

/** `text` matched literally by SCAN's MATCH (a key prefix may hold glob characters). */

/** The adapter's service over the connection in force. */
const makeRedisReviewStore = Effect.gen(function* () {
  const redis = yield* Redis.Redis
  const prefix = yield* RedisKeyPrefix
  const { version, channel } = configVersionKeys(prefix)
  const approvalsKey = redisKey(prefix, "reviews", "approvals")
  const rejectionsKey = redisKey(prefix, "reviews", "rejections")
  const fail = (operation: ReviewStoreError["operation"]) => (error: unknown) =>
    new ReviewStoreError({ operation, cause: (error as Redis.RedisError)?.cause ?? error })
  const runRecord = redis.eval(record)
  const runDecide = redis.eval(decide)
  const sorted = <A extends { readonly team: string; readonly domain: string }>(
    reply: unknown,
    decode: (text: string) => A,
    team: string | undefined
  ): Array<A> =>
    [...hashEntries(reply).values()]
      .map(decode)
      .filter((decision) => team === undefined || decision.team === team)
      .sort((a, b) => (decisionKey(a.team, a.domain) < decisionKey(b.team, b.domain) ? -1 : 1))
  return {
    record: (batch: QueueBatch, options: RecordOptions) => {
      const teams = [...batch].map(([team, queue]) => ({
        team,
        dropped: queue.dropped,
        entries: [...queue.entries.values()]
      }))
      if (teams.length === 0) return Effect.void
      return Effect.asVoid(
        runRecord(prefix, JSON.stringify(teams), options.maxPerTeam, oldestDayKept(options.now))
      ).pipe(Effect.mapError(fail("record")))
    },
    queue: (team: string) =>
      Effect.gen(function* () {
        const reply = yield* redis.send("HGETALL", redisKey(prefix, "reviews", "queue", team))
        const dropped = yield* redis.send<string | null>("HGET", redisKey(prefix, "reviews", "dropped"), team)
        return {
          entries: [...hashEntries(reply).values()].map(entryOf),
          dropped: dropped === null ? 0 : Number(dropped)
        }
      }).pipe(Effect.mapError(fail("read"))),
    teams: () =>
      Effect.gen(function* () {
        const queuePrefix = redisKey(prefix, "reviews", "queue", "")
        const teams = new Set(hashEntries(yield* redis.send("HGETALL", redisKey(prefix, "reviews", "dropped"))).keys())
        yield* eachKeyPage(redis, queuePrefix, (keys) =>
          Effect.sync(() => {
            for (const key of keys) teams.add(key.slice(queuePrefix.length))
          })
        )
        return [...teams]
      }).pipe(Effect.mapError(fail("read"))),
    entry: (team: string, domain: string) =>
      redis.send<string | null>("HGET", redisKey(prefix, "reviews", "queue", team), domain).pipe(
        Effect.mapError(fail("read")),
        Effect.flatMap((text) =>
          text === null ? Effect.succeed(undefined) : Effect.try({ try: () => entryOf(text), catch: fail("read") })
        )
      ),
    decide: (decision: ReviewDecision) => {
      const { team, domain } = decision.kind === "approve" ? decision.approval : decision.rejection
      const json = JSON.stringify(decision.kind === "approve" ? decision.approval : decision.rejection)
      return Effect.asVoid(
        runDecide(
          approvalsKey,
          rejectionsKey,
          redisKey(prefix, "reviews", "decided", team),
          redisKey(prefix, "reviews", "rank", team),
          version,
          channel,
          decision.kind,
          decisionKey(team, domain),
          json,
          domain
        )
      ).pipe(Effect.mapError(fail("decide")))
    },
    decisions: (team?: string) =>
      Effect.gen(function* () {
        const approvals = yield* redis.send("HGETALL", approvalsKey)
        const rejections = yield* redis.send("HGETALL", rejectionsKey)
        return {
          approvals: sorted(approvals, decodeApproval, team),
          rejections: sorted(rejections, decodeRejection, team)
        }
      }).pipe(Effect.mapError(fail("read")))
  } satisfies ReviewStore["Service"]
})

/** Hashes and sorted sets on the shared Redis server; a decision makes every daemon reload. */
export const layerRedis: Layer.Layer<ReviewStore, never, RedisConnection> = Layer.effect(
  ReviewStore,
  Effect.suspend(() => Effect.map(makeRedisReviewStore, ReviewStore.of))
)
