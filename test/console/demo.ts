/**
 * A daemon with sample data for the console: the shipped example config
 * (teams acme and globex), a key for each team, an offer of acme's made
 * through the API (so it can be paused), validations of it made through
 * the API today, and, since the API cannot make validations on past days,
 * a history of the previous weeks written into its usage statistics before
 * the daemon starts, through the file adapter's own writer, and a key that
 * expires in five days, and a review queue of acme's: unknown domains its
 * traffic met over the last weeks, with the candidates the engine scores
 * for them, written the same way. Jobs are evaluated on the daemon's own thread
 * (`jobs.workerThreads: 0`, a batch at a time), so a job of a million
 * emails runs for seconds: long enough to be cancelled from the page. Used
 * by the console's browser test and by `npm run screenshots`.
 */
import { createHash } from "node:crypto"
import { createApiKey } from "../../src/app/Keys.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { buildInstitutionTable } from "../../src/engine/InstitutionIndex.ts"
import { candidateScorer } from "../../src/engine/institutions/CandidateScorer.ts"
import { dayOf, type QueueEntry } from "../../src/reviews/queueEntries.ts"
import { writeQueueFile } from "../../src/reviews/reviewFiles.ts"
import { addUniqueHash, DAY_MS, emptyUsageState } from "../../src/stats/UsageState.ts"
import { writeUsageFile } from "../../src/stats/usageFiles.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon } from "../server/daemon.ts"

export const DEMO_OFFER = {
  id: "acme-spring-sale",
  name: "Spring sale for UK and partner students",
  description: "20% off Acme Learning for students of UK universities and Acme's partner colleges.",
  targetGroups: ["uk-students", "acme-partners"],
  status: "active"
} as const

/** A past day of the history: how many days before today, and its counts. */
export interface PastDay {
  readonly daysAgo: number
  readonly eligible: number
  readonly ineligible: number
}

/** Six weeks of history with a weekly rhythm; the test reads a few of these days back from the chart. */
export const DEMO_HISTORY: ReadonlyArray<PastDay> = Array.from({ length: 42 }, (_, index) => {
  const daysAgo = 42 - index
  const weekday = daysAgo % 7
  const base = 18 + ((index * 7) % 11) + (weekday < 2 ? -10 : 0)
  return { daysAgo, eligible: base, ineligible: Math.round(base * 0.35) + (index % 3) }
}).filter((day) => day.daysAgo !== 9) // a quiet day, drawn as zero

/** The reasons of the history's ineligible validations, in these shares (the last takes the rest). */
const HISTORY_REASONS: ReadonlyArray<readonly [string, number]> = [
  ["NO_TARGET_GROUP_MATCHED", 0.55],
  ["FREE_MAIL_PROVIDER", 0.2],
  ["ROLE_ACCOUNT", 0.15],
  ["DISPOSABLE_EMAIL", 0.1]
]

/** Validations made through the API today: address, and whether the offer takes it. */
export const DEMO_TODAY: ReadonlyArray<readonly [string, boolean]> = [
  ["jane@ox.ac.uk", true],
  ["sam@cam.ac.uk", true],
  ["kim@partner-college.org", true],
  ["lee@students.partner-college.org", true],
  ["jane@samples.com", false],
  ["admin@ox.ac.uk", false],
  ["old@alumni.partner-college.org", false]
]

const dayNumber = (ms: number) => Math.floor(ms / DAY_MS)

/** Writes the offer's history as its stored usage statistics (before the daemon starts). */
const writeHistory = (dataDir: string, now: number): Promise<void> => {
  const state = emptyUsageState()
  const today = dayNumber(now)
  for (const day of DEMO_HISTORY) {
    const validations = day.eligible + day.ineligible
    state.daily.set(today - day.daysAgo, { validations, eligible: day.eligible, ineligible: day.ineligible })
    state.validations += validations
    state.eligible += day.eligible
    state.ineligible += day.ineligible
  }
  let left = state.ineligible
  HISTORY_REASONS.forEach(([reason, share], index) => {
    const count = index === HISTORY_REASONS.length - 1 ? left : Math.round(state.ineligible * share)
    state.ineligibleByReason.set(reason, count)
    left -= count
  })
  state.matchesByTargetGroup.set("uk-students", Math.round(state.eligible * 0.7))
  state.matchesByTargetGroup.set("acme-partners", state.eligible - Math.round(state.eligible * 0.7))
  // About four validations in five are of a new address.
  for (let person = 0; person < Math.round(state.validations * 0.8); person++) {
    const digest = createHash("sha256").update(`demo-person-${person}`).digest()
    addUniqueHash(state, digest.readUInt32BE(0), digest.readUInt32BE(4))
  }
  const oldest = Math.max(...DEMO_HISTORY.map((day) => day.daysAgo))
  state.firstAt = (today - oldest) * DAY_MS + 9 * 3_600_000
  state.lastAt = (today - 1) * DAY_MS + 17 * 3_600_000
  // `sent` counts each verification once (the funnel's middle step), `messagesSent` every message.
  Object.assign(state.verifications, { started: 64, sent: 58, messagesSent: 61, verified: 41, failed: 3, expired: 9 })
  // The hosted page: 90 flows, 52 reached the code step (38 left at the email step), 37 completed (15 left at the code step).
  Object.assign(state.hostedFlow, { started: 90, reachedCodeStep: 52, completed: 37, ineligibleSubmissions: 11 })
  return writeUsageFile(dataDir, DEMO_OFFER.id, { state, applied: new Map() })
}

/** An unknown domain of a review queue: the days before today it was met on, with their counts. */
export interface PastReview {
  readonly domain: string
  readonly days: ReadonlyArray<readonly [daysAgo: number, count: number]>
}

/** Domains no source lists that acme's traffic met, for the Reviews screen. */
export const DEMO_REVIEWS: ReadonlyArray<PastReview> = [
  {
    domain: "hfk-nordstadt.de",
    days: [
      [12, 3],
      [6, 5],
      [2, 2],
      [1, 9],
      [0, 4]
    ]
  },
  {
    domain: "sampleton-state-college.us",
    days: [
      [20, 1],
      [3, 2],
      [0, 1]
    ]
  },
  {
    domain: "bright-minds-academy.org",
    days: [
      [9, 2],
      [2, 1]
    ]
  },
  {
    domain: "cheap-degrees-online.com",
    days: [
      [4, 1],
      [1, 2]
    ]
  }
]

/**
 * Writes a team's review queue into the data directory (before the daemon
 * starts), through the file adapter's own writer, each domain with the
 * candidate the engine scores for it.
 */
export const writeReviewQueue = async (
  dataDir: string,
  team: string,
  reviews: ReadonlyArray<PastReview>,
  now: number
): Promise<void> => {
  const scorer = candidateScorer(buildInstitutionTable())
  const entries = new Map<string, QueueEntry>()
  for (const review of reviews) {
    const candidate = scorer.candidateOf(review.domain)
    if (candidate === null) throw new Error(`${review.domain} has no candidate`)
    const ages = review.days.map(([daysAgo]) => daysAgo)
    entries.set(review.domain, {
      domain: review.domain,
      count: review.days.reduce((sum, [, count]) => sum + count, 0),
      accepted: 0,
      days: Object.fromEntries(review.days.map(([daysAgo, count]) => [dayOf(now - daysAgo * DAY_MS), count])),
      firstSeen: now - Math.max(...ages) * DAY_MS - 3_600_000,
      lastSeen: now - Math.min(...ages) * DAY_MS - 60_000,
      candidate
    })
  }
  await writeQueueFile(dataDir, new Map([[team, { entries, dropped: 0 }]]))
}

export interface Demo {
  readonly daemon: Daemon
  /** A key of team acme that may do everything the console offers. */
  readonly acmeKey: string
  /** A key of team globex. */
  readonly globexKey: string
  /** The id of a key of acme's that expires in five days (the Status screen warns of it). */
  readonly expiringKeyId: string
}

export const startDemo = async (options: { readonly consoleDir?: string } = {}): Promise<Demo> => {
  const dirs = copyConfig()
  setSettings(dirs, [[["jobs", "workerThreads"], 0]])
  const acmeKey = makeKey(dirs, "acme", [
    "offers:read",
    "offers:write",
    "target-groups:read",
    "validate:target-groups",
    "validate:offers",
    "validate:bulk",
    "jobs:read",
    "status:read",
    "institutions:review"
  ])
  const globexKey = makeKey(dirs, "globex", ["offers:read", "target-groups:read", "jobs:read", "status:read"])
  const expiring = createApiKey({
    ...dirs,
    team: "acme" as TeamId,
    scopes: ["offers:read"],
    name: "shop integration",
    expiresInDays: 5
  })
  await writeHistory(dirs.dataDir, Date.now())
  await writeReviewQueue(dirs.dataDir, "acme", DEMO_REVIEWS, Date.now())
  const daemon = await startDaemon(
    dirs,
    options.consoleDir === undefined ? {} : { CAMPUSGATE_CONSOLE_DIR: options.consoleDir }
  )
  const created = await call(daemon, "POST", "/api/v1/offers", { key: acmeKey, body: DEMO_OFFER })
  if (created.status !== 201) throw new Error(`the demo offer was not created: ${JSON.stringify(created.body)}`)
  for (const [email, eligible] of DEMO_TODAY) {
    const answer = await call(daemon, "POST", "/api/v1/validate/offer", {
      key: acmeKey,
      body: { email, offerId: DEMO_OFFER.id }
    })
    if (answer.status !== 200 || answer.body.isValid !== eligible)
      throw new Error(`${email}: expected ${eligible ? "eligible" : "ineligible"}, got ${JSON.stringify(answer.body)}`)
  }
  return { daemon, acmeKey, globexKey, expiringKeyId: expiring.id }
}
