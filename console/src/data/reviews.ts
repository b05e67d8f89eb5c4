/**
 * The Reviews screen's data, shaped as pure functions: the queue's pages
 * (`GET /api/v1/institution-reviews?status=&sort=&limit=&cursor=`), a
 * candidate's score and signals in words, the suggestions the approve form
 * starts from (a name from the nearest institution or the domain's words,
 * the likeliest type given the signals, the country of the domain's
 * ccTLD), the days a domain was met on as small bars, and the decisions
 * made as lines of an audit trail. Nothing here reads the clock: the
 * caller says which day is today.
 */
import { countryRows } from "../../../src/domain/countries.data.ts"
import { genericUseCcTlds, tldCountryExceptions, trustedSecondLevels } from "../../../src/domain/countryTlds.data.ts"
import type {
  CandidateSignal,
  HostRole,
  InstitutionReview,
  InstitutionType,
  ReviewList,
  ReviewSort,
  ReviewStatus
} from "../apiTypes.ts"
import { countryName } from "./criteria.ts"
import { dateMs, utcDate } from "./days.ts"

export const REVIEWS_PATH = "/api/v1/institution-reviews"

/** The queue's tabs, in the order shown, with their names. */
export const REVIEW_STATUSES: ReadonlyArray<readonly [ReviewStatus, string]> = [
  ["pending", "Pending"],
  ["approved", "Approved"],
  ["rejected", "Rejected"]
]

/** The list's orders, with their names. */
export const REVIEW_SORTS: ReadonlyArray<readonly [ReviewSort, string]> = [
  ["count", "Most met first"],
  ["score", "Most likely first"],
  ["recent", "Last seen first"]
]

/** Every institution type the API takes, with its name in the form (the record keeps the list whole). */
export const TYPE_NAMES: Readonly<Record<InstitutionType, string>> = {
  university: "University",
  college: "College",
  school: "School",
  research: "Research institution",
  other: "Other"
}

/** Whom the domain serves when it serves one group only, with its name in the form (absent: its members alike). */
export const ROLE_NAMES: Readonly<Record<HostRole, string>> = {
  student: "Students only",
  staff: "Staff only",
  alumni: "Alumni only",
  mixed: "Members alike"
}

/** Every country the API takes (ISO 3166-1 alpha-2), by name. */
export const COUNTRIES: ReadonlyArray<{ readonly code: string; readonly name: string }> = countryRows
  .map(([code, , name]) => ({ code, name }))
  .sort((a, b) => a.name.localeCompare(b.name, "en"))

const assigned = new Set(countryRows.map(([code]) => code))

/** The path of one domain of the queue, and of its decisions (`approve`, `reject`). */
export const reviewPath = (domain: string, decision?: "approve" | "reject"): string =>
  `${REVIEWS_PATH}/${encodeURIComponent(domain)}${decision === undefined ? "" : `/${decision}`}`

/** The address of a page of the queue: the first without a cursor, the next with the previous page's `nextCursor`. */
export const reviewsPageUrl = (
  query: { readonly status: ReviewStatus; readonly sort: ReviewSort; readonly limit: number },
  cursor: string | null = null
): string => {
  const params = new URLSearchParams({ status: query.status, sort: query.sort, limit: String(query.limit) })
  if (cursor !== null) params.set("cursor", cursor)
  return `${REVIEWS_PATH}?${params}`
}

/** The domains shown, in the order read, the cursor of the page after them (null: none) and the queue's `dropped`. */
export interface ReviewPages {
  readonly reviews: ReadonlyArray<InstitutionReview>
  readonly nextCursor: string | null
  readonly dropped: number
}

/** The list with one more page read: the first (no list yet) or the one after `shown`; a domain already shown is kept once. */
export const withReviewPage = (shown: ReviewPages | undefined, page: ReviewList): ReviewPages => {
  if (shown === undefined) return { reviews: page.data, nextCursor: page.nextCursor, dropped: page.dropped }
  const seen = new Set(shown.reviews.map((review) => review.domain))
  return {
    reviews: [...shown.reviews, ...page.data.filter((review) => !seen.has(review.domain))],
    nextCursor: page.nextCursor,
    dropped: page.dropped
  }
}

/** The list without a domain (decided, so it left the tab shown). */
export const withoutDomain = (shown: ReviewPages, domain: string): ReviewPages => ({
  ...shown,
  reviews: shown.reviews.filter((review) => review.domain !== domain)
})

/** A score from 0 to 1 as a whole percentage: `87%`. */
export const scorePercent = (score: number): string => `${Math.round(Math.min(1, Math.max(0, score)) * 100)}%`

/** A score from 0 to 1 in words. */
export const scoreWords = (score: number): string => {
  if (score >= 0.85) return "very likely an institution"
  if (score >= 0.6) return "likely an institution"
  if (score >= 0.4) return "uncertain"
  if (score >= 0.15) return "unlikely an institution"
  return "very unlikely an institution"
}

/**
 * The signals the engine reports (`src/engine/institutions/candidates.ts`),
 * by the part of their id before a colon, with their names: `family:college`
 * is a word of the college family in the label, `zone:cctld` the kind of
 * zone it is registered in, `shape:hyphens` its shape. Another id shows as
 * it is spelled.
 */
const SIGNAL_NAMES: Readonly<Record<string, string>> = {
  letters: "Spelling",
  family: "Word",
  zone: "Zone",
  place: "Place name",
  "known-name": "Known name",
  "known-acronym": "Known acronym",
  shape: "Shape"
}

/** A signal's name: `Word` for `family:college`, or the id as it is. */
export const signalName = (signal: string): string => SIGNAL_NAMES[signal.split(":")[0] ?? signal] ?? signal

export interface SignalLine {
  readonly signal: string
  /** The signal's name: `Word` for `family:college`. */
  readonly name: string
  readonly detail: string
  readonly weight: number
  readonly direction: "for" | "against" | "neither"
  /** By how much, in words: `strongly`, `clearly`, `slightly`. */
  readonly strength: "strongly" | "clearly" | "slightly" | "not at all"
  /** The whole line: `Speaks strongly for an institution (+2.30)`. */
  readonly text: string
}

const signedWeight = (weight: number): string =>
  `${weight > 0 ? "+" : weight < 0 ? "−" : "±"}${Math.abs(weight).toFixed(2)}`

/** Below this weight (in log-odds: a change of about 1% in the odds), a signal says next to nothing. */
const NEGLIGIBLE = 0.05

/**
 * A candidate's signals in words, the weightiest first (ties: for before
 * against, then by id): each says whether it speaks for or against an
 * institution, and how strongly. A weight is the signal's share of the
 * score's log-odds (the engine's add up to a few units): 1.5 or more is
 * strong (the odds change more than fourfold), 0.5 or more clear, more
 * than 0.05 slight, less next to nothing.
 */
export const signalLines = (signals: ReadonlyArray<CandidateSignal>): ReadonlyArray<SignalLine> =>
  [...signals]
    .sort(
      (a, b) => Math.abs(b.weight) - Math.abs(a.weight) || b.weight - a.weight || a.signal.localeCompare(b.signal, "en")
    )
    .map((entry) => {
      const size = Math.abs(entry.weight)
      const direction = size < NEGLIGIBLE ? "neither" : entry.weight > 0 ? "for" : "against"
      const strength =
        size >= 1.5 ? "strongly" : size >= 0.5 ? "clearly" : size >= NEGLIGIBLE ? "slightly" : "not at all"
      const text =
        direction === "neither"
          ? `Says next to nothing either way (${signedWeight(entry.weight)})`
          : `Speaks ${strength} ${direction} an institution (${signedWeight(entry.weight)})`
      return {
        signal: entry.signal,
        name: signalName(entry.signal),
        detail: entry.detail,
        weight: entry.weight,
        direction,
        strength,
        text
      }
    })

/**
 * The country a domain's ccTLD names, as the engine reads it
 * (`src/domain/Country.ts` `countryFromTld`, over the same tables): `de` is
 * DE, `uk` GB; a generic-use ccTLD (`io`, `me`, `tv`…) names none unless
 * under an academic zone (`ucg.ac.me` is ME); a generic TLD names none.
 */
export const countryOfDomain = (domain: string): string | undefined => {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".")
  const tld = labels.at(-1) ?? ""
  const secondLevel = labels.length > 2 ? labels.at(-2) : undefined
  const exception = tldCountryExceptions[tld]
  if (exception !== undefined) return exception === "" ? undefined : exception
  if (!/^[a-z]{2}$/.test(tld)) return undefined
  const code = tld.toUpperCase()
  if (!assigned.has(code) || code === "XK") return undefined
  if (genericUseCcTlds.has(tld) && !(secondLevel !== undefined && trustedSecondLevels.has(secondLevel)))
    return undefined
  return code
}

/** Second-level labels that are a zone, not a name: `ac.uk`, `edu.au`, `co.jp`, `k12.ca.us`. */
const ZONE_LABELS = new Set([
  "ac",
  "edu",
  "sch",
  "k12",
  "co",
  "com",
  "org",
  "net",
  "gov",
  "or",
  "ne",
  "go",
  "gob",
  "mil"
])

/** The label that names a domain: `hfmt-hamburg` of `hfmt-hamburg.de`, `foo` of `www.foo.ac.uk`. */
export const nameLabel = (domain: string): string => {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".")
  let end = labels.length - 1
  while (end > 0 && ZONE_LABELS.has(labels[end - 1]!) && end - 1 > 0) end--
  return labels[end - 1] ?? labels[0] ?? ""
}

/** A word of a domain as a name's word: `Hamburg`; a word without vowels or of two letters as an acronym: `HFMT`, `TU`. */
const nameWord = (word: string): string =>
  word.length <= 2 || !/[aeiouy]/.test(word) ? word.toUpperCase() : word[0]!.toUpperCase() + word.slice(1)

/** The words of a domain's name label as a name: `hfmt-hamburg.de` is `HFMT Hamburg`. */
export const domainWords = (domain: string): string =>
  nameLabel(domain).split(/[-_]+/).filter(Boolean).map(nameWord).join(" ")

/**
 * The name the approve form starts from: the name of a nearest known
 * institution whose domain has the same name label (the same institution
 * under another TLD), else the domain's words. A suggestion only: the form
 * lets it be changed, and offers the nearest names as well.
 */
export const suggestName = (review: Pick<InstitutionReview, "domain" | "nearest">): string => {
  const label = nameLabel(review.domain)
  const same = review.nearest.find((near) => near.name !== null && nameLabel(near.domain) === label)
  return same?.name ?? domainWords(review.domain)
}

/** The distinct names of the nearest institutions, for the name field's list of suggestions. */
export const nearestNames = (review: Pick<InstitutionReview, "nearest">): ReadonlyArray<string> => [
  ...new Set(review.nearest.flatMap((near) => (near.name === null ? [] : [near.name])))
]

/**
 * The type of institution each word family of the engine speaks for (as
 * `src/engine/institutions/inferType.ts` types names: a Hochschule, an
 * academy, a conservatoire or an institute is a college); the families
 * that say nothing of a type (medicine, science, technology…) are left out.
 */
const FAMILY_TYPES: Readonly<Record<string, InstitutionType>> = {
  university: "university",
  college: "college",
  polytechnic: "college",
  academy: "college",
  arts: "college",
  seminary: "college",
  institute: "college",
  school: "school",
  k12: "school",
  research: "research"
}

/** The order a tie between types is broken in. */
const TYPE_ORDER: ReadonlyArray<InstitutionType> = ["university", "college", "school", "research"]

/** The stem a word-family signal found: `hochschule` of `"hochschule" in musikhochschule-x: a college word`. */
const stemOf = (detail: string): string => /^"([^"]+)"/.exec(detail)?.[1] ?? ""

/**
 * The type the domain's words name: each word-family signal
 * (`family:college`, `"hochschule" in musikhochschule-x: a college word`)
 * counts for its family's type, except one whose word lies inside another
 * signal's longer word (the `schule` of `hochschule` names no school); the
 * type most named wins, ties in the order university, college, school,
 * research; `university` when none is named. A signal's weight says how
 * much it speaks for an institution, not for a type, so it is not counted.
 */
export const suggestType = (signals: ReadonlyArray<CandidateSignal>): InstitutionType => {
  const words = signals.flatMap((entry) => {
    const [kind, family] = entry.signal.split(":")
    const type = kind === "family" && family !== undefined ? FAMILY_TYPES[family] : undefined
    return type === undefined ? [] : [{ type, stem: stemOf(entry.detail) }]
  })
  const counts = new Map<InstitutionType, number>()
  for (const word of words) {
    const inside = words.some((other) => other.stem.length > word.stem.length && other.stem.includes(word.stem))
    if (!inside || word.stem === "") counts.set(word.type, (counts.get(word.type) ?? 0) + 1)
  }
  let best: InstitutionType = "university"
  let most = 0
  for (const type of TYPE_ORDER)
    if ((counts.get(type) ?? 0) > most) {
      best = type
      most = counts.get(type) ?? 0
    }
  return best
}

/** What the approve form starts from. */
export interface ApprovalDraft {
  readonly name: string
  readonly type: InstitutionType
  /** An ISO 3166-1 alpha-2 code, or "" for none. */
  readonly country: string
  readonly region: string
  /** "" for any role (the API's default). */
  readonly role: HostRole | ""
}

export const approvalDraft = (review: InstitutionReview): ApprovalDraft => ({
  name: suggestName(review),
  type: suggestType(review.candidate.signals),
  country: countryOfDomain(review.domain) ?? "",
  region: "",
  role: ""
})

/** The approve request of a filled form: names trimmed, the country and region upper case, empty optional fields left out. */
export const approvalRequest = (draft: ApprovalDraft) => {
  const region = draft.region.trim().toUpperCase()
  return {
    name: draft.name.trim(),
    type: draft.type,
    ...(draft.country === "" ? {} : { country: draft.country.toUpperCase() }),
    ...(region === "" ? {} : { region }),
    ...(draft.role === "" ? {} : { role: draft.role })
  }
}

/** One day of the small bars: its date, count and height relative to the busiest day (0..1). */
export interface DayBar {
  readonly day: string
  readonly count: number
  readonly height: number
}

/** The `span` days that end with `today`, oldest first, with the domain's counts (the quiet days as zeros). */
export const dayBars = (
  days: ReadonlyArray<{ readonly day: string; readonly count: number }>,
  today: string,
  span = 30
): ReadonlyArray<DayBar> => {
  const counts = new Map(days.map((entry) => [entry.day, entry.count]))
  const end = dateMs(today)
  const dates = Array.from({ length: span }, (_, index) => utcDate(end - (span - 1 - index) * 86_400_000))
  const largest = Math.max(0, ...dates.map((day) => counts.get(day) ?? 0))
  return dates.map((day) => {
    const count = counts.get(day) ?? 0
    return { day, count, height: largest === 0 ? 0 : count / largest }
  })
}

/** One decision of the audit trail. */
export interface AuditLine {
  readonly domain: string
  readonly decision: "approved" | "rejected"
  /** The API key that decided. */
  readonly by: string
  /** ISO 8601. */
  readonly at: string
  /** What was decided: `as "HFMT Hamburg", a college in Germany (DE)`, or the rejection's reason. */
  readonly text: string
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a")

const TYPE_WORDS_IN_TEXT: Readonly<Record<InstitutionType, string>> = {
  university: "university",
  college: "college",
  school: "school",
  research: "research institution",
  other: "institution of another kind"
}

/**
 * The decisions among `reviews` as an audit trail, newest first (ties by
 * domain): who (the key id) approved or rejected which domain, when, and
 * as what or why. A review without a decision makes no line.
 */
export const auditLines = (reviews: ReadonlyArray<InstitutionReview>): ReadonlyArray<AuditLine> => {
  const lines: Array<AuditLine> = []
  for (const review of reviews) {
    const approval = review.approval
    if (approval !== undefined) {
      const kind = TYPE_WORDS_IN_TEXT[approval.type]
      const where = [
        approval.country === null ? undefined : `in ${countryName(approval.country)}`,
        approval.region === null ? undefined : `region ${approval.region}`,
        approval.role === undefined ? undefined : `serving ${approval.role}`
      ].filter((part) => part !== undefined)
      lines.push({
        domain: review.domain,
        decision: "approved",
        by: approval.approvedBy,
        at: approval.approvedAt,
        text: `as "${approval.name}", ${article(kind)} ${kind}${where.length === 0 ? "" : ` ${where.join(", ")}`}`
      })
    }
    const rejection = review.rejection
    if (rejection !== undefined)
      lines.push({
        domain: review.domain,
        decision: "rejected",
        by: rejection.rejectedBy,
        at: rejection.rejectedAt,
        text: rejection.reason
      })
  }
  return lines.sort(
    (a, b) => Date.parse(b.at) - Date.parse(a.at) || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)
  )
}
