/**
 * The institution review queue as every transport asks for it (the
 * handlers, `campusgate review`): a team's unknown domains with their
 * counts, how likely each is an institution, the nearest known
 * institutions and what each of the team's target groups decides now; and
 * the operator's decision on each.
 *
 * An approval is stored (`ReviewStore`), written to the reviewed dataset
 * to commit to git (`reviews/reviewedFile.ts`: the config directory's
 * `datasets/reviewed.yaml`, else the data directory's `reviewed.yaml`) and
 * the snapshot reloaded before the answer, so the next validation of the
 * team serves it; with Redis, the store's write bumps the configuration
 * version and every other daemon reloads within a second. A rejection is
 * remembered the same way and ends an approval made before. Decisions are
 * made one at a time in a process, and atomically in the store, so
 * decisions sent at once on one domain leave one.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import { reviewedYaml } from "../config/reviewedDatasets.ts"
import { countryFromTld } from "../domain/Country.ts"
import type {
  ApproveRequest,
  Candidate,
  InstitutionReview,
  RejectRequest,
  ReviewedInstitution,
  ReviewListing,
  ReviewPage,
  ReviewRejection
} from "../domain/InstitutionReview.ts"
import { DomainName } from "../domain/TargetGroup.ts"
import { hostOf } from "../engine/institutionOf.ts"
import { InstitutionSearch } from "../engine/institutions/InstitutionSearch.ts"
import { evaluateTargetGroup } from "../engine/targeting/evaluateTargetGroup.ts"
import { byRank, DAYS_KEPT, dayOf, type QueueEntry } from "../reviews/queueEntries.ts"
import { ReviewQueue } from "../reviews/ReviewQueue.ts"
import { type ReviewDecision, ReviewStore, type ReviewStoreError } from "../reviews/ReviewStore.ts"
import { type ReviewedFiles, writeDecision } from "../reviews/reviewedFile.ts"
import { type ConfigSnapshot, Snapshot } from "./Snapshot.ts"
import { visibleTargetGroup, visibleTargetGroups } from "./visibility.ts"

/** Why a review request failed; `unavailable` is the store (503), the others the request. */
export class ReviewsError extends Schema.TaggedError<ReviewsError>()("ReviewsError", {
  reason: Schema.Literals(["invalid-domain", "invalid-cursor", "not-found", "listed", "unavailable"]),
  detail: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  override get message(): string {
    return this.detail
  }
}

/** Who decides: the calling key's team and id. */
export interface Reviewer {
  readonly team: string
  readonly keyId: string
}

const NEAREST = 5
const DEFAULT_LIMIT = 50
const noCandidate = (domain: string): Candidate => ({ domain, score: 0, signals: [] })
/** Labels that say nothing of an institution's name. */
const GENERIC_LABELS = new Set(["www", "mail", "ac", "edu", "co", "com", "org", "net", "gov", "sch", "info", "web"])

const unavailable = (error: ReviewStoreError) =>
  new ReviewsError({ reason: "unavailable", detail: error.message, cause: error })

const isDomainName = Schema.is(DomainName)

/** The domain a path names (a host, or an address's), lower-case ASCII; or the problem. */
export const reviewDomain = (input: string): string | ReviewsError => {
  const host = hostOf(input.trim())
  if (host === undefined || !isDomainName(host))
    return new ReviewsError({
      reason: "invalid-domain",
      detail: `"${input}" is not a domain name such as hfmt-hamburg.de.`
    })
  return host
}

const encodeCursor = (offset: number): string => Buffer.from(`o:${offset}`, "utf8").toString("base64url")
const decodeCursor = (cursor: string): number | undefined => {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  return match === null ? undefined : Number(match[1])
}

/** The order of a listing. */
const sorters: Record<NonNullable<ReviewListing["sort"]>, (a: Row, b: Row) => number> = {
  count: (a, b) => byRank(a.entry, b.entry),
  score: (a, b) => b.entry.candidate.score - a.entry.candidate.score || b.entry.count - a.entry.count || byName(a, b),
  recent: (a, b) => b.entry.lastSeen - a.entry.lastSeen || byName(a, b)
}
const byName = (a: Row, b: Row) => (a.entry.domain < b.entry.domain ? -1 : a.entry.domain > b.entry.domain ? 1 : 0)

/** A domain of the listing before it is dressed: its counts (zero for one decided unseen) and decision. */
interface Row {
  readonly entry: QueueEntry
  readonly approval?: ReviewedInstitution | undefined
  readonly rejection?: ReviewRejection | undefined
}

/** The nearest known institutions: by each word of the domain's labels, in the country its top-level domain names first. */
const nearestOf = (snapshot: ConfigSnapshot, domain: string): InstitutionReview["nearest"] => {
  const labels = domain.split(".")
  const country = countryFromTld(labels[labels.length - 1]!, labels.length > 2 ? labels[labels.length - 2] : undefined)
  const words = labels
    .slice(0, -1)
    .flatMap((label) => label.split("-"))
    .filter((word) => word.length >= 3 && !GENERIC_LABELS.has(word))
  const search = InstitutionSearch.of(snapshot.engine.context.index)
  const found = new Map<string, InstitutionReview["nearest"][number]>()
  const add = (q: string, inCountry: string | undefined) => {
    if (found.size >= NEAREST) return
    for (const institution of search.search({ q, country: inCountry, limit: NEAREST }).institutions) {
      if (found.size >= NEAREST) return
      if (found.has(institution.id) || institution.domains.includes(domain)) continue
      found.set(institution.id, {
        id: institution.id,
        name: institution.name,
        domain: institution.domains[0] ?? "",
        country: institution.country,
        type: institution.type
      })
    }
  }
  for (const word of words) if (country !== undefined) add(word, country)
  for (const word of words) add(word, undefined)
  return [...found.values()]
}

/** What each target group the team sees decides now for an address of the domain (no usage, no counters). */
const decisionsOf = (snapshot: ConfigSnapshot, team: string, domain: string): InstitutionReview["decisions"] => {
  const { engine } = snapshot
  const probe = `review-probe@${domain}`
  return visibleTargetGroups(engine, team).flatMap((targetGroup) => {
    const group = visibleTargetGroup(engine, team, targetGroup.id)
    if (group === undefined) return []
    const result = evaluateTargetGroup(group, engine.context, probe)
    return [
      {
        targetGroup: targetGroup.id,
        name: targetGroup.name,
        isValid: result.isValid,
        ...(result.reasonCode === undefined ? {} : { reasonCode: result.reasonCode })
      }
    ]
  })
}

/** The candidate the engine sees now for a domain not yet met (any group's domain detail says it). */
const candidateNow = (snapshot: ConfigSnapshot, team: string, domain: string): Candidate => {
  const { engine } = snapshot
  for (const targetGroup of visibleTargetGroups(engine, team)) {
    const group = visibleTargetGroup(engine, team, targetGroup.id)
    if (group === undefined) continue
    const candidate = evaluateTargetGroup(group, engine.context, `review-probe@${domain}`).validationDetails.domain
      .candidate
    if (candidate !== undefined) return candidate
  }
  return noCandidate(domain)
}

/** A row as answered. */
const reviewOf = (snapshot: ConfigSnapshot, team: string, row: Row, now: number): InstitutionReview => {
  const { entry, approval, rejection } = row
  const oldest = dayOf(now - (DAYS_KEPT - 1) * 86_400_000)
  const days = Object.entries(entry.days)
    .filter(([day]) => day >= oldest)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([day, count]) => ({ day, count }))
  const seen = entry.count === 0 ? undefined : entry
  const decidedAt = approval?.approvedAt ?? rejection?.rejectedAt ?? new Date(now).toISOString()
  return {
    domain: entry.domain,
    status: approval !== undefined ? "approved" : rejection !== undefined ? "rejected" : "pending",
    count: entry.count,
    accepted: entry.accepted,
    days,
    firstSeen: seen === undefined ? decidedAt : new Date(seen.firstSeen).toISOString(),
    lastSeen: seen === undefined ? decidedAt : new Date(seen.lastSeen).toISOString(),
    candidate: seen === undefined ? candidateNow(snapshot, team, entry.domain) : entry.candidate,
    nearest: nearestOf(snapshot, entry.domain),
    decisions: decisionsOf(snapshot, team, entry.domain),
    ...(approval === undefined ? {} : { approval }),
    ...(rejection === undefined ? {} : { rejection })
  }
}

const unseen = (domain: string): QueueEntry => ({
  domain,
  count: 0,
  accepted: 0,
  days: {},
  firstSeen: 0,
  lastSeen: 0,
  candidate: noCandidate(domain)
})

/** Whether a source lists the domain already (or a domain it is under): nothing to approve. */
const listedBy = (snapshot: ConfigSnapshot, domain: string): string | undefined => {
  const match = snapshot.engine.context.index.lookup(domain)
  return match.kind === "listed" ? match.matchedDomain : undefined
}

export interface ReviewsService {
  list(team: string, query: ReviewListing): Effect.Effect<ReviewPage, ReviewsError>
  get(team: string, domain: string): Effect.Effect<InstitutionReview, ReviewsError>
  approve(reviewer: Reviewer, domain: string, request: ApproveRequest): Effect.Effect<InstitutionReview, ReviewsError>
  reject(reviewer: Reviewer, domain: string, request: RejectRequest): Effect.Effect<InstitutionReview, ReviewsError>
  /** The reviewed dataset's YAML of `team`'s approvals (absent: every team's), to commit. */
  exportYaml(team?: string): Effect.Effect<string, ReviewsError>
}

export class Reviews extends Context.Service<Reviews, ReviewsService>()("campusgate/app/Reviews") {
  /**
   * The service over the store, the queue's buffer (flushed before a read,
   * so a validation just made is listed) and the snapshot; `files` says
   * where an approval is written (`reviews/reviewedFile.ts`).
   */
  static readonly layer = (files: ReviewedFiles): Layer.Layer<Reviews, never, ReviewStore | ReviewQueue | Snapshot> =>
    Layer.effect(
      Reviews,
      Effect.gen(function* () {
        const store = yield* ReviewStore
        const queue = yield* ReviewQueue
        const snapshots = yield* Snapshot
        const lock = yield* Semaphore.make(1)
        const flushed = queue.flush.pipe(Effect.mapError(unavailable))

        /**
         * The team's decisions: the store's, and the approvals of the reviewed dataset in force that the store
         * does not hold (an entry committed to git, or made with `campusgate review` beside a running daemon).
         */
        const decisionsOf = (team: string) =>
          store.decisions(team).pipe(
            Effect.mapError(unavailable),
            Effect.map(({ approvals, rejections }) => {
              const rejected = new Set(rejections.map((rejection) => rejection.domain))
              const byDomain = new Map<string, ReviewedInstitution>()
              for (const approval of snapshots.current().config.reviewed ?? [])
                if (approval.team === team && !rejected.has(approval.domain)) byDomain.set(approval.domain, approval)
              for (const approval of approvals) byDomain.set(approval.domain, approval)
              return { approvals: [...byDomain.values()], rejections }
            })
          )

        const rowOf = Effect.fnUntraced(function* (team: string, domain: string) {
          const entry = yield* store.entry(team, domain).pipe(Effect.mapError(unavailable))
          const { approvals, rejections } = yield* decisionsOf(team)
          const approval = approvals.find((decision) => decision.domain === domain)
          const rejection = rejections.find((decision) => decision.domain === domain)
          return { entry: entry ?? unseen(domain), approval, rejection } satisfies Row
        })

        const answer = (team: string, row: Row) =>
          Effect.map(Clock.currentTimeMillis, (now) => reviewOf(snapshots.current(), team, row, now))

        const list = Effect.fn("Reviews.list")(function* (team: string, query: ReviewListing) {
          let offset = 0
          if (query.cursor !== undefined) {
            const decoded = decodeCursor(query.cursor)
            if (decoded === undefined)
              return yield* new ReviewsError({ reason: "invalid-cursor", detail: "The cursor is not valid." })
            offset = decoded
          }
          yield* flushed
          const { entries, dropped } = yield* store.queue(team).pipe(Effect.mapError(unavailable))
          const { approvals, rejections } = yield* decisionsOf(team)
          const approved = new Map(approvals.map((approval) => [approval.domain, approval]))
          const rejected = new Map(rejections.map((rejection) => [rejection.domain, rejection]))
          const status = query.status ?? "pending"
          const rows: Array<Row> = []
          const byDomain = new Map(entries.map((entry) => [entry.domain, entry]))
          if (status === "pending") {
            for (const entry of entries)
              if (!approved.has(entry.domain) && !rejected.has(entry.domain)) rows.push({ entry })
          } else if (status === "approved") {
            for (const approval of approvals)
              rows.push({ entry: byDomain.get(approval.domain) ?? unseen(approval.domain), approval })
          } else {
            for (const rejection of rejections)
              rows.push({ entry: byDomain.get(rejection.domain) ?? unseen(rejection.domain), rejection })
          }
          rows.sort(sorters[query.sort ?? "count"])
          const limit = query.limit ?? DEFAULT_LIMIT
          const now = yield* Clock.currentTimeMillis
          const snapshot = snapshots.current()
          return {
            data: rows.slice(offset, offset + limit).map((row) => reviewOf(snapshot, team, row, now)),
            nextCursor: offset + limit < rows.length ? encodeCursor(offset + limit) : null,
            dropped
          }
        })

        const get = Effect.fn("Reviews.get")(function* (team: string, input: string) {
          const domain = reviewDomain(input)
          if (domain instanceof ReviewsError) return yield* domain
          yield* flushed
          const row = yield* rowOf(team, domain)
          if (row.entry.count === 0 && row.approval === undefined && row.rejection === undefined)
            return yield* new ReviewsError({
              reason: "not-found",
              detail: `${domain} is not in the review queue of team "${team}".`
            })
          return yield* answer(team, row)
        })

        /** Stores a decision, writes the reviewed dataset and reloads, one decision at a time. */
        const decide = (team: string, domain: string, decision: ReviewDecision) =>
          Effect.gen(function* () {
            yield* store.decide(decision).pipe(Effect.mapError(unavailable))
            yield* Effect.tryPromise({
              try: () => writeDecision(files, snapshots.current().config, decision),
              catch: (cause) =>
                new ReviewsError({
                  reason: "unavailable",
                  detail: `The reviewed dataset could not be written: ${String((cause as Error)?.message ?? cause)}`,
                  cause
                })
            })
            yield* snapshots.reload()
            return yield* rowOf(team, domain)
          }).pipe(Semaphore.withPermit(lock))

        /** A reviewer's decision on the domain `input` names, as `decisionOf` makes it at this moment: stored and answered. */
        const decideOn = Effect.fnUntraced(function* (
          reviewer: Reviewer,
          input: string,
          decisionOf: (domain: string, at: string) => ReviewDecision | ReviewsError
        ) {
          const domain = reviewDomain(input)
          if (domain instanceof ReviewsError) return yield* domain
          const decision = decisionOf(domain, new Date(yield* Clock.currentTimeMillis).toISOString())
          if (decision instanceof ReviewsError) return yield* decision
          const row = yield* decide(reviewer.team, domain, decision)
          return yield* answer(reviewer.team, row)
        })

        const approve = (reviewer: Reviewer, input: string, request: ApproveRequest) =>
          decideOn(reviewer, input, (domain, at): ReviewDecision | ReviewsError => {
            const listed = listedBy(snapshots.current(), domain)
            if (listed !== undefined)
              return new ReviewsError({
                reason: "listed",
                detail:
                  listed === domain
                    ? `${domain} is listed by a source already: it needs no approval.`
                    : `${domain} is under ${listed}, which a source lists already: it needs no approval.`
              })
            const approval = {
              domain,
              team: reviewer.team,
              name: request.name,
              type: request.type,
              country: request.country ?? null,
              region: request.region ?? null,
              ...(request.role === undefined ? {} : { role: request.role }),
              approvedBy: reviewer.keyId,
              approvedAt: at
            } as ReviewedInstitution
            return { kind: "approve", approval }
          }).pipe(Effect.withSpan("Reviews.approve"))

        const reject = (reviewer: Reviewer, input: string, request: RejectRequest) =>
          decideOn(reviewer, input, (domain, at): ReviewDecision => {
            const rejection = {
              domain,
              team: reviewer.team,
              reason: request.reason,
              rejectedBy: reviewer.keyId,
              rejectedAt: at
            } as ReviewRejection
            return { kind: "reject", rejection }
          }).pipe(Effect.withSpan("Reviews.reject"))

        const exportYaml = Effect.fn("Reviews.exportYaml")(function* (team?: string) {
          const { approvals } = yield* store.decisions(team).pipe(Effect.mapError(unavailable))
          return reviewedYaml(approvals)
        })

        return Reviews.of({ list, get, approve, reject, exportYaml })
      })
    )
}
