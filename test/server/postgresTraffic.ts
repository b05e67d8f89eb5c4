/**
 * Real traffic through daemons on PostgreSQL while a test breaks the
 * store, and what it was told: single validations counting usage,
 * verifications started and confirmed, target groups created, each call
 * sent again as a client does on 503 (after `Retry-After`, shortened) and
 * on 409 "still running" (the same Idempotency-Key). `expectAcknowledgedKept`
 * compares the database and the daemons' answers with what was acknowledged
 * once the traffic has stopped.
 *
 * One outcome is the network's and no daemon's to avoid: a write the
 * server committed as the connection was cut, so that the daemon could not
 * even ask whether it is there (`store/postgresLostReply.ts`), answered 503.
 * Its retry then meets the write done — a group "already exists" (or "is
 * not available", while this daemon has not reloaded it yet), a
 * verification "is verified, no longer pending", or a start sent again
 * under its key makes a second verification. Each is allowed only after a
 * 503 of that very call met while the test cut the connections (`cutting`;
 * a lost reply alone must be settled by the daemon), is counted
 * (`doneWhileRefused`, `startsRefused`),
 * and the state it leaves is what is then expected; usage counts it not, as
 * it was not acknowledged.
 */
import { randomUUID } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import { PgClient, postgresClientLayer } from "../../src/store/postgres.ts"
import { readOutbox } from "../../src/verification/outbox.ts"
import { call, type Daemon, within } from "./daemon.ts"

/** The offer single validations count into, and the offer verifications are started for (`writeVerifyOffer`). */
export const SINGLE_OFFER = "acme-winter-semester"
export const VERIFY_OFFER = "store-faults-verify"

/** Settings for the traffic: usage flushed often, its rate limits out of the way. */
export const trafficSettings = [
  [["statistics", "flushIntervalMs"], 200],
  [["rateLimits", "verifications", "requests"], 100_000],
  [["rateLimits", "validate", "requests"], 100_000],
  [["rateLimits", "default", "requests"], 100_000]
] as const

/** Adds the verification offer to a copied config. */
export const writeVerifyOffer = (configDir: string) =>
  writeFileSync(
    join(configDir, "offers", `${VERIFY_OFFER}.yaml`),
    `${JSON.stringify({
      id: VERIFY_OFFER,
      team: "acme",
      name: VERIFY_OFFER,
      targetGroups: ["universities"],
      status: "active",
      verification: { maxMessagesPerAddress: 1000 }
    })}\n`
  )

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Rows of `statement` on the database at `url` (reached directly, not through a proxy). */
export const query = <A extends object>(url: string, statement: string): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      return yield* sql.unsafe<A>(statement)
    }).pipe(Effect.provide(postgresClientLayer(url)))
  )

type Answer = Awaited<ReturnType<typeof call>>

export interface Traffic {
  /** What was acknowledged (2xx): validations, verification starts and confirmations, groups created. */
  readonly acknowledged: { validations: number; starts: number; verified: number; groups: Array<string> }
  /** Each verification's status as its last acknowledged call left it. */
  readonly states: Map<string, string>
  /** 503s met (and those without `Retry-After`), 409s "still running", and every other answer not expected. */
  readonly seen: {
    unavailable: number
    withoutRetryAfter: number
    stillRunning: number
    unexpected: Array<string>
    /** Calls answered 503 whose write was done, met by their retry. */
    doneWhileRefused: Array<string>
    /** Verification starts refused (503) during a cut before they were acknowledged. */
    startsRefused: number
  }
  /** Says the test is cutting the daemons' connections (true) or has stopped (false: a cut's 503s come for 3 s more). */
  cutting(on: boolean): void
  /** Sends `send` until it is answered with neither 503 nor 409 "still running", and answers that. */
  untilAnswered(what: string, send: () => Promise<Answer>): Promise<Answer>
  /** Stops the traffic and resolves once every call in flight is answered. */
  stop(): Promise<void>
}

/** Starts traffic through `daemons` (round robin): `workers` of each kind. */
export const startTraffic = (
  daemons: ReadonlyArray<Daemon>,
  key: string,
  options: { readonly groups?: boolean; readonly workers?: number } = {}
): Traffic => {
  const acknowledged = { validations: 0, starts: 0, verified: 0, groups: [] as Array<string> }
  const states = new Map<string, string>()
  const seen = {
    unavailable: 0,
    withoutRetryAfter: 0,
    stillRunning: 0,
    unexpected: [] as Array<string>,
    doneWhileRefused: [] as Array<string>,
    startsRefused: 0
  }
  const lastRefusal = new Map<string, unknown>()
  /** Calls refused while connections were being cut. */
  const refusedByCut = new Set<string>()
  let cutUntil = 0
  let running = true

  const untilAnswered = async (what: string, send: () => Promise<Answer>): Promise<Answer> => {
    const deadline = Date.now() + 45_000
    for (;;) {
      const answer = await send().catch((error: unknown) => ({
        status: 0,
        headers: new Headers(),
        body: String(error)
      }))
      const stillRunning = answer.status === 409 && String(answer.body?.detail).includes("still running")
      if (answer.status !== 503 && !stillRunning) return answer
      lastRefusal.set(what, answer.body)
      if (answer.status === 503 && Date.now() <= cutUntil) refusedByCut.add(what)
      if (stillRunning) seen.stillRunning++
      else {
        seen.unavailable++
        if (!/^\d+$/.test(answer.headers.get("retry-after") ?? "")) seen.withoutRetryAfter++
      }
      if (Date.now() > deadline) throw new Error(`${what}: still ${answer.status} after 45 s`)
      await sleep(150)
    }
  }
  const unexpected = (what: string, answer: Answer) =>
    seen.unexpected.push(
      `${what}: ${answer.status} ${JSON.stringify(answer.body)} (last refused with ${JSON.stringify(lastRefusal.get(what))})`
    )
  const at = (i: number) => daemons[i % daemons.length]!

  const codeOf = async (id: string): Promise<string> => {
    const deadline = Date.now() + 45_000
    for (;;) {
      for (const daemon of daemons) {
        const [message] = await readOutbox(join(daemon.dataDir, "outbox"), 1, id)
        const code = message === undefined ? undefined : /^\s*(\d{6,10})\s*$/m.exec(message.text)?.[1]
        if (code !== undefined) return code
      }
      if (Date.now() > deadline) throw new Error(`no message for ${id}`)
      await sleep(50)
    }
  }

  const validations = async (worker: number) => {
    for (let i = 0; running; i++) {
      const what = `validation ${worker}-${i}`
      const answer = await untilAnswered(what, () =>
        call(at(worker + i), "POST", "/api/v1/validate/offer", {
          key,
          body: { email: `single${worker}-${i}@mit.edu`, offerId: SINGLE_OFFER }
        })
      )
      if (answer.status === 200) acknowledged.validations++
      else unexpected(what, answer)
      await sleep(20)
    }
  }

  const verifications = async (worker: number) => {
    for (let i = 0; running; i++) {
      const idempotencyKey = randomUUID()
      const what = `start ${worker}-${i}`
      const started = await untilAnswered(what, () =>
        call(at(worker + i), "POST", "/api/v1/verifications", {
          key,
          body: { email: `verify${worker}-${i}@ox.ac.uk`, offerId: VERIFY_OFFER },
          headers: { "idempotency-key": idempotencyKey }
        })
      )
      if (started.status !== 201) {
        unexpected(what, started)
        continue
      }
      if (refusedByCut.has(what)) seen.startsRefused++
      if (started.headers.get("idempotent-replayed") !== "true") acknowledged.starts++
      const id: string = started.body.id
      states.set(id, started.body.status)
      const code = await codeOf(id)
      const confirm = `confirm ${id}`
      const confirmed = await untilAnswered(confirm, () =>
        call(at(worker + i + 1), "POST", `/api/v1/verifications/${id}/confirm`, { key, body: { code } })
      )
      if (confirmed.status === 200) {
        acknowledged.verified++
        states.set(id, confirmed.body.status)
      } else if (
        confirmed.status === 409 &&
        confirmed.body.code === "VERIFICATION_NOT_PENDING" &&
        String(confirmed.body.detail).includes("is verified") &&
        refusedByCut.has(confirm)
      ) {
        seen.doneWhileRefused.push(confirm)
        states.set(id, "verified")
      } else unexpected(confirm, confirmed)
    }
  }

  const groups = async (worker: number) => {
    for (let i = 0; running; i++) {
      const id = `faults-${worker}-${i}`
      const what = `group ${id}`
      const created = await untilAnswered(what, () =>
        call(at(worker + i), "POST", "/api/v1/target-groups", {
          key,
          body: { id, name: id, team: "acme", criteria: { domains: { allow: [`${id}.samples.edu`] } } },
          headers: { "idempotency-key": `group-${id}` }
        })
      )
      if (created.status === 201) acknowledged.groups.push(id)
      else if (
        created.status === 409 &&
        /already exists|is not available/.test(String(created.body.detail)) &&
        refusedByCut.has(what)
      ) {
        seen.doneWhileRefused.push(what)
        acknowledged.groups.push(id)
      } else unexpected(what, created)
      await sleep(50)
    }
  }

  const workers = options.workers ?? 2
  const all = [
    ...Array.from({ length: workers }, (_, i) => validations(i)),
    ...Array.from({ length: workers + 1 }, (_, i) => verifications(i)),
    ...(options.groups === true ? Array.from({ length: workers }, (_, i) => groups(i)) : [])
  ]
  return {
    acknowledged,
    states,
    seen,
    cutting: (on) => {
      cutUntil = on ? Number.POSITIVE_INFINITY : Date.now() + 3000
    },
    untilAnswered,
    stop: async () => {
      running = false
      await Promise.all(all)
    }
  }
}

/**
 * Once the traffic has stopped: nothing unexpected was answered, the store's
 * absence was met and answered 503 with `Retry-After`; every verification is
 * in the state its last acknowledged call put it in, and none is stored that
 * was not acknowledged; every acknowledged group is served; usage counts
 * exactly what was acknowledged (waiting for the last flushes, then once more
 * a moment later: nothing counted twice).
 */
export const expectAcknowledgedKept = async (
  traffic: Traffic,
  daemons: ReadonlyArray<Daemon>,
  key: string,
  databaseUrl: string
) => {
  if (traffic.seen.unexpected.length > 0) {
    // What the daemons said about it: their errors.
    for (const daemon of daemons)
      for (const line of daemon.lines) if (line.level === "error") console.error(JSON.stringify(line).slice(0, 2000))
  }
  expect(traffic.seen.unexpected).toEqual([])
  expect(traffic.seen.unavailable).toBeGreaterThan(0)
  expect(traffic.seen.withoutRetryAfter).toBe(0)
  expect(traffic.acknowledged.starts).toBeGreaterThan(3)

  const rows = await query<{ id: string; status: string }>(
    databaseUrl,
    "select id, record->>'status' as status from campusgate_verification_records order by id"
  )
  const stored = Object.fromEntries(rows.map((row) => [row.id, row.status]))
  // Every acknowledged verification in its state; besides them, only a start's first try answered 503, pending.
  expect(Object.fromEntries([...traffic.states].map(([id]) => [id, stored[id]]))).toEqual(
    Object.fromEntries([...traffic.states])
  )
  const others = rows.filter((row) => !traffic.states.has(row.id))
  expect(others.every((row) => row.status === "pending")).toBe(true)
  expect(others.length).toBeLessThanOrEqual(traffic.seen.startsRefused)

  // Served by every daemon: none left serving a configuration it could not reload while the store was away.
  for (const id of traffic.acknowledged.groups) {
    for (const daemon of daemons) {
      await within(
        async () => (await call(daemon, "GET", `/api/v1/target-groups/${id}`, { key })).status === 200,
        2000
      ).catch(() => expect.fail(`${id} is not served by ${daemon.url}`))
    }
  }

  const counts = async () => {
    const usageOf = async (offerId: string) =>
      (await call(daemons[0]!, "GET", `/api/v1/offers/${offerId}/status`, { key })).body.usage
    const [single, verify] = await Promise.all([usageOf(SINGLE_OFFER), usageOf(VERIFY_OFFER)])
    return {
      validations: single.validations,
      started: verify.verifications.started,
      verified: verify.verifications.verified
    }
  }
  const wanted = {
    validations: traffic.acknowledged.validations,
    started: traffic.acknowledged.starts,
    verified: traffic.acknowledged.verified
  }
  if (traffic.seen.doneWhileRefused.length > 0 || others.length > 0) {
    console.warn(
      `writes done while answered 503 (the connection cut as they committed): ${traffic.seen.doneWhileRefused.join(", ")}; verifications stored by a start answered 503: ${others.length}`
    )
  }
  const settled = Date.now() + 10_000
  while (JSON.stringify(await counts()) !== JSON.stringify(wanted) && Date.now() < settled) await sleep(200)
  await sleep(1000)
  expect(await counts()).toEqual(wanted)
}
