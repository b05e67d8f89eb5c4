/**
 * The review store's file format, under `<dataDir>/reviews/`:
 * `queue.json` (every team's queue and dropped count, replaced whole at
 * each flush: one write per flush) and `decisions.json` (approvals and
 * rejections, replaced whole at each decision). Both are written with
 * `writeFileAtomicAsync` (temp file, fsync, rename), so a reader or a
 * restart sees one complete version. A file that does not decode stops the
 * load with its name rather than being overwritten.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { ReviewedInstitution, ReviewRejection } from "../domain/InstitutionReview.ts"
import { writeFileAtomicAsync } from "../store/atomicWrite.ts"
import { type QueueEntry, StoredEntry, type TeamQueue } from "./queueEntries.ts"

export const REVIEWS_DIR = "reviews"

const QueueFile = Schema.Struct({
  version: Schema.Literal(1),
  teams: Schema.Record(Schema.String, Schema.Struct({ dropped: Schema.Number, entries: Schema.Array(StoredEntry) }))
})

const DecisionsFile = Schema.Struct({
  version: Schema.Literal(1),
  approvals: Schema.Array(ReviewedInstitution),
  rejections: Schema.Array(ReviewRejection)
})

const decodeQueue = Schema.decodeUnknownSync(Schema.fromJsonString(QueueFile))
const decodeDecisions = Schema.decodeUnknownSync(Schema.fromJsonString(DecisionsFile))

/** What the file adapter holds: queues by team, decisions by `team/domain`. */
export interface StoredReviews {
  readonly teams: ReadonlyMap<string, TeamQueue>
  readonly approvals: ReadonlyMap<string, ReviewedInstitution>
  readonly rejections: ReadonlyMap<string, ReviewRejection>
}

const queuePath = (dataDir: string) => join(dataDir, REVIEWS_DIR, "queue.json")
const decisionsPath = (dataDir: string) => join(dataDir, REVIEWS_DIR, "decisions.json")

const readIfPresent = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

const decoded = <A>(path: string, decode: (text: string) => A, text: string): A => {
  try {
    return decode(text)
  } catch (error) {
    throw new Error(`${path} is not a review store file: ${(error as Error).message}`)
  }
}

/** The stored queues and decisions; absent files are empty. */
export const readReviewFiles = (dataDir: string): StoredReviews => {
  const teams = new Map<string, TeamQueue>()
  const approvals = new Map<string, ReviewedInstitution>()
  const rejections = new Map<string, ReviewRejection>()
  const queueText = readIfPresent(queuePath(dataDir))
  if (queueText !== undefined) {
    const file = decoded(queuePath(dataDir), decodeQueue, queueText)
    for (const [team, queue] of Object.entries(file.teams)) {
      const entries = new Map<string, QueueEntry>()
      for (const entry of queue.entries) entries.set(entry.domain, { ...entry, days: { ...entry.days } })
      teams.set(team, { entries, dropped: queue.dropped })
    }
  }
  const decisionsText = readIfPresent(decisionsPath(dataDir))
  if (decisionsText !== undefined) {
    const file = decoded(decisionsPath(dataDir), decodeDecisions, decisionsText)
    for (const approval of file.approvals) approvals.set(`${approval.team}/${approval.domain}`, approval)
    for (const rejection of file.rejections) rejections.set(`${rejection.team}/${rejection.domain}`, rejection)
  }
  return { teams, approvals, rejections }
}

/** Replaces `queue.json` with every team's queue. */
export const writeQueueFile = (dataDir: string, teams: ReadonlyMap<string, TeamQueue>): Promise<void> => {
  const file: typeof QueueFile.Encoded = {
    version: 1,
    teams: Object.fromEntries(
      [...teams].map(([team, queue]) => [team, { dropped: queue.dropped, entries: [...queue.entries.values()] }])
    )
  }
  return writeFileAtomicAsync(queuePath(dataDir), `${JSON.stringify(file)}\n`)
}

/** Replaces `decisions.json` with every decision. */
export const writeDecisionsFile = (dataDir: string, stored: StoredReviews): Promise<void> => {
  const file = {
    version: 1,
    approvals: [...stored.approvals.values()],
    rejections: [...stored.rejections.values()]
  }
  return writeFileAtomicAsync(decisionsPath(dataDir), `${JSON.stringify(file, null, 2)}\n`)
}
