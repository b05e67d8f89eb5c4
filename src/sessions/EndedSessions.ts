/**
 * Console sessions ended by signing out (issue 17). A session token is
 * stateless (`server/consoleSession.ts`): removing the browser's cookie
 * would leave a copy of it valid until the token's own end. Signing out
 * therefore records the session's nonce here until that end; past it the
 * token is refused anyway and the record is dropped, so the store holds at
 * most the sign-outs of one session lifetime and cleans itself.
 *
 * `hasEnded` is synchronous — the fast path decides at the `node:http`
 * level (`server/credentials.ts`) — and answers from this process's view,
 * kept current by each adapter:
 * - memory: one process (tests);
 * - files: `<dataDir>/console-sessions-ended.json`, changed under a lock
 *   file and written atomically, re-read when its stamp (mtime, size,
 *   inode) moved, so another process's sign-out counts at the next request;
 * - Redis (`endedSessionsRedis.ts`): shared by every daemon, each seeing a
 *   sign-out made on another within `VERSION_POLL_MS` (milliseconds when
 *   the announcement arrives), as it sees a revoked key;
 * - PostgreSQL (`endedSessionsPostgres.ts`): the same, rows in the shared
 *   database, announced by `NOTIFY` and polled every `VERSION_POLL_MS`.
 * One contract suite (`test/sessions/EndedSessions.test.ts`) runs against
 * every adapter.
 */
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { writeFileAtomic } from "../store/atomicWrite.ts"
import { withFileLock } from "../store/fileLock.ts"
import { markOutage } from "../store/outage.ts"

export const ENDED_SESSIONS_FILE = "console-sessions-ended.json"

/** A session ended before its time: its nonce, and its token's own end (epoch milliseconds). */
export interface EndedSession {
  readonly nonce: string
  readonly until: number
}

export class EndedSessionsError extends Schema.TaggedError<EndedSessionsError>()("EndedSessionsError", {
  operation: Schema.Literals(["end", "list"]),
  cause: Schema.Defect()
}) {
  override get message(): string {
    return `The ended-sessions store failed to ${this.operation}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(EndedSessionsError)

export interface EndedSessionsService {
  /** Records that `session` ended, for every process sharing the store; done when the store has it. */
  end(session: EndedSession): Effect.Effect<void, EndedSessionsError>
  /** Whether the session of `nonce` was ended and its token has not reached its own end at `now`. */
  hasEnded(nonce: string, now: number): boolean
  /** The sessions ended whose tokens have not reached their end at `now` (what `campusgate migrate` copies). */
  list(now: number): Effect.Effect<ReadonlyArray<EndedSession>, EndedSessionsError>
}

/** Nonces and their ends, as the file and the Redis adapter's view hold them. */
export type EndedMap = ReadonlyMap<string, number>

/** `ended` without what is over at `now`. */
export const stillRunning = (ended: EndedMap, now: number): Map<string, number> => {
  const kept = new Map<string, number>()
  for (const [nonce, until] of ended) if (until > now) kept.set(nonce, until)
  return kept
}

export const endedIn = (ended: EndedMap, nonce: string, now: number): boolean => {
  const until = ended.get(nonce)
  return until !== undefined && until > now
}

const listOf = (ended: EndedMap, now: number): ReadonlyArray<EndedSession> =>
  Array.from(stillRunning(ended, now), ([nonce, until]) => ({ nonce, until }))

/**
 * A shared store's adapter (Redis, PostgreSQL) over what the store does:
 * `store` records a sign-out for every process, `read` lists the sign-outs
 * not over at a time, `watch` runs a refresh whenever another process
 * signed out. The process's view is the store as last read plus its own
 * sign-outs (a read that started before one may not hold it), so `hasEnded`
 * answers synchronously. Watching starts before the first read: a sign-out
 * after the version was read moves it, so the read misses nothing.
 */
export const makeSharedEndedSessions = <E, R>(shared: {
  readonly store: (session: EndedSession, now: number) => Effect.Effect<void, unknown>
  readonly read: (now: number) => Effect.Effect<EndedMap, E>
  readonly watch: (refresh: Effect.Effect<void, E>) => Effect.Effect<void, never, R | Scope.Scope>
}): Effect.Effect<EndedSessionsService, E, R | Scope.Scope> =>
  Effect.gen(function* () {
    let view: EndedMap = new Map()
    let own = new Map<string, number>()
    const refresh = Effect.flatMap(Clock.currentTimeMillis, shared.read).pipe(
      Effect.flatMap((ended) =>
        Effect.sync(() => {
          view = ended
        })
      )
    )
    yield* shared.watch(refresh)
    yield* refresh
    return {
      end: (session) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          yield* shared.store(session, now)
          own = stillRunning(own, now)
          own.set(session.nonce, Math.max(session.until, own.get(session.nonce) ?? 0))
        }).pipe(Effect.mapError((cause) => new EndedSessionsError({ operation: "end", cause }))),
      hasEnded: (nonce, now) => endedIn(own, nonce, now) || endedIn(view, nonce, now),
      list: (now) =>
        shared.read(now).pipe(
          Effect.map((ended) => listOf(ended, now)),
          Effect.mapError((cause) => new EndedSessionsError({ operation: "list", cause }))
        )
    }
  })

const EndedFile = Schema.Struct({ version: Schema.Literal(1), ended: Schema.Record(Schema.String, Schema.Number) })
const decodeFile = Schema.decodeUnknownSync(Schema.fromJsonString(EndedFile))

const makeMemory = (): EndedSessionsService => {
  let ended = new Map<string, number>()
  return {
    end: ({ nonce, until }) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        ended = stillRunning(ended, now)
        ended.set(nonce, Math.max(until, ended.get(nonce) ?? 0))
      }),
    hasEnded: (nonce, now) => endedIn(ended, nonce, now),
    list: (now) => Effect.sync(() => listOf(ended, now))
  }
}

const makeFiles = (dataDir: string): EndedSessionsService => {
  const path = join(dataDir, ENDED_SESSIONS_FILE)
  let cached: { readonly stamp: string; readonly ended: EndedMap } = { stamp: "", ended: new Map() }
  const stampOf = (): string => {
    try {
      const stat = statSync(path)
      return `${stat.mtimeMs}:${stat.size}:${stat.ino}`
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return ""
      throw error
    }
  }
  const read = (): EndedMap => {
    const stamp = stampOf()
    if (stamp === cached.stamp) return cached.ended
    const ended = stamp === "" ? new Map() : new Map(Object.entries(decodeFile(readFileSync(path, "utf8")).ended))
    cached = { stamp, ended }
    return ended
  }
  const failed = (operation: EndedSessionsError["operation"]) => (cause: unknown) =>
    new EndedSessionsError({ operation, cause })
  return {
    end: ({ nonce, until }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.try({
          try: () =>
            withFileLock(path, () => {
              cached = { stamp: "", ended: new Map() }
              const ended = stillRunning(read(), now)
              ended.set(nonce, Math.max(until, ended.get(nonce) ?? 0))
              const text = `${JSON.stringify({ version: 1, ended: Object.fromEntries(ended) })}\n`
              writeFileAtomic(path, text, 0o600)
            }),
          catch: failed("end")
        })
      ),
    hasEnded: (nonce, now) => {
      try {
        return endedIn(read(), nonce, now)
      } catch {
        // A record that cannot be read cannot say a session goes on: refused, until the file is readable.
        return true
      }
    },
    list: (now) => Effect.try({ try: () => listOf(read(), now), catch: failed("list") })
  }
}

export class EndedSessions extends Context.Service<EndedSessions, EndedSessionsService>()(
  "campusgate/sessions/EndedSessions"
) {
  static readonly makeMemory = makeMemory
  static readonly makeFiles = makeFiles

  /** Sign-outs in this process's memory: lost when it ends. */
  static readonly layerMemory: Layer.Layer<EndedSessions> = Layer.sync(EndedSessions, makeMemory)

  /** Sign-outs in `<dataDir>/console-sessions-ended.json`. */
  static readonly layerFiles = (dataDir: string): Layer.Layer<EndedSessions> =>
    Layer.sync(EndedSessions, () => makeFiles(dataDir))
}
