/**
 * What travels when a deployment's state is copied (`campusgate migrate`)
 * or backed up (`campusgate backup`, `restore`): one entry per record, the
 * same whether it goes from one store's ports to another's or through an
 * archive line (`archive.ts`). An entry is small — a verification, an
 * offer's statistics, a review team's queue, a piece of a job's bytes — so
 * a copy of any size streams.
 *
 * What is copied: API-created resources, the data location's API keys (by
 * hash: a store never holds a plaintext key; keys in the config directory
 * stay in git), usage statistics (exact counters, the unique-email
 * registers and the steps applied once), verifications, console sessions
 * ended, the review queue and its decisions, every generated secret the
 * store holds and the signing keys (sealed in an archive), and jobs (their
 * records, input and results bytes). Not copied: idempotency answers (24 h
 * of retries), the OpenID Connect provider's state (sessions and codes of
 * minutes; clients sign in again) and rate-limit counters (seconds).
 */
import * as Schema from "effect/Schema"
import { ApiKeyRecord } from "../../domain/ApiKey.ts"
import { ReviewedInstitution, ReviewRejection } from "../../domain/InstitutionReview.ts"
import { UsageDelta } from "../../domain/OfferUsage.ts"
import { VerificationRecord } from "../../domain/Verification.ts"
import { Job } from "../../jobs/Job.ts"
import { StoredEntry } from "../../reviews/queueEntries.ts"
import { SigningKey } from "../../verification/SigningKeyStore.ts"

export const ResourceEntry = Schema.Struct({
  t: Schema.Literal("resource"),
  kind: Schema.Literals(["targetGroup", "offer"]),
  id: Schema.String,
  text: Schema.String
})

export const ApiKeyEntry = Schema.Struct({ t: Schema.Literal("apiKey"), record: ApiKeyRecord })

/** An offer's statistics: its counters and registers, and the last step of each source applied once. */
export const UsageEntry = Schema.Struct({
  t: Schema.Literal("usage"),
  offerId: Schema.String,
  delta: UsageDelta,
  applied: Schema.Record(Schema.String, Schema.Number)
})

export const VerificationEntry = Schema.Struct({ t: Schema.Literal("verification"), record: VerificationRecord })

export const EndedSessionEntry = Schema.Struct({
  t: Schema.Literal("endedSession"),
  nonce: Schema.String,
  until: Schema.Number
})

/** A team's review queue: its entries and how many domains it let go. */
export const ReviewQueueEntry = Schema.Struct({
  t: Schema.Literal("reviewQueue"),
  team: Schema.String,
  entries: Schema.Array(StoredEntry),
  dropped: Schema.Number
})

export const ReviewDecisionEntry = Schema.Struct({
  t: Schema.Literal("reviewDecision"),
  decision: Schema.Union([
    Schema.Struct({ kind: Schema.Literal("approve"), approval: ReviewedInstitution }),
    Schema.Struct({ kind: Schema.Literal("reject"), rejection: ReviewRejection })
  ])
})

/** A generated secret, by its name in Redis and PostgreSQL (`deployment/secrets.ts`), whatever it is. */
export const SecretEntry = Schema.Struct({ t: Schema.Literal("secret"), name: Schema.String, value: Schema.String })

export const SigningKeysEntry = Schema.Struct({ t: Schema.Literal("signingKeys"), keys: Schema.Array(SigningKey) })

/** A job's record and the sizes of its input and results, whose bytes follow in `JobBytesEntry`s, input first. */
export const JobEntry = Schema.Struct({
  t: Schema.Literal("job"),
  job: Job,
  input: Schema.Number,
  results: Schema.Number
})

/** A piece of a job's input or results, in order. */
export const JobBytesEntry = Schema.Struct({
  t: Schema.Literal("jobBytes"),
  file: Schema.Literals(["input", "results"]),
  data: Schema.Uint8ArrayFromBase64
})

export const StoreEntry = Schema.Union([
  ResourceEntry,
  ApiKeyEntry,
  UsageEntry,
  VerificationEntry,
  EndedSessionEntry,
  ReviewQueueEntry,
  ReviewDecisionEntry,
  SecretEntry,
  SigningKeysEntry,
  JobEntry,
  JobBytesEntry
])
export type StoreEntry = typeof StoreEntry.Type

/** The entries an archive seals with the passphrase (`sealing.ts`): they would let anyone sign or read as the deployment. */
export const isSealed = (entry: StoreEntry): boolean => entry.t === "secret" || entry.t === "signingKeys"

/** How many of each were copied: what every command prints, and an archive's last line checks. */
export const Counts = Schema.Struct({
  resources: Schema.Number,
  apiKeys: Schema.Number,
  offersWithStatistics: Schema.Number,
  verifications: Schema.Number,
  endedSessions: Schema.Number,
  reviewTeams: Schema.Number,
  reviewDecisions: Schema.Number,
  secrets: Schema.Number,
  signingKeys: Schema.Number,
  jobs: Schema.Number
})
export type Counts = typeof Counts.Type

export const noCounts = (): { -readonly [K in keyof Counts]: number } => ({
  resources: 0,
  apiKeys: 0,
  offersWithStatistics: 0,
  verifications: 0,
  endedSessions: 0,
  reviewTeams: 0,
  reviewDecisions: 0,
  secrets: 0,
  signingKeys: 0,
  jobs: 0
})

const countOf: Partial<Record<StoreEntry["t"], keyof Counts>> = {
  resource: "resources",
  apiKey: "apiKeys",
  usage: "offersWithStatistics",
  verification: "verifications",
  endedSession: "endedSessions",
  reviewQueue: "reviewTeams",
  reviewDecision: "reviewDecisions",
  secret: "secrets",
  job: "jobs"
}

/** Counts `entry` in `counts`. */
export const countEntry = (counts: ReturnType<typeof noCounts>, entry: StoreEntry): void => {
  if (entry.t === "signingKeys") counts.signingKeys += entry.keys.length
  const which = countOf[entry.t]
  if (which !== undefined) counts[which]++
}
