/**
 * The error table (`server/problemOf.ts`): every reason of every service's
 * error has its row, and each row answers the status, the code and, for a
 * 429 or 503, the `Retry-After` clients rely on, as the response leaves
 * (`problemResponse.ts`). A store outage met as a defect is a 503 whatever
 * the store's kind — a file store's failure, a Redis command's — and is
 * recognised by its mark, not by Redis's error tag.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import { describe, expect, it } from "vitest"
import type { Problem } from "../../src/api/problems.ts"
import * as Resources from "../../src/app/ResourcesError.ts"
import { ReviewsError } from "../../src/app/Reviews.ts"
import { ValidationError } from "../../src/app/Validation.ts"
import { OfferNotFound, TargetGroupNotFound } from "../../src/domain/errors.ts"
import * as Jobs from "../../src/jobs/errors.ts"
import { JobStore, JobStoreError } from "../../src/jobs/JobStore.ts"
import * as JobStoreFiles from "../../src/jobs/JobStoreFiles.ts"
import { JobInputError } from "../../src/jobs/jobInputError.ts"
import { ResourceStoreError } from "../../src/resources/ResourceStore.ts"
import {
  answerJobsError,
  answerVerificationsError,
  jobInputProblem,
  jobStoreProblem,
  problemOfReason,
  reviewsProblem,
  storeOutageProblem
} from "../../src/server/problemOf.ts"
import { problemResponse } from "../../src/server/problemResponse.ts"
import { Redis as RedisService } from "../../src/store/redis.ts"
import * as Verifications from "../../src/verification/VerificationsError.ts"
import { describeRedis, testRedisLayer } from "../redisTesting.ts"

const errors = [{ field: "/name", code: "REQUIRED", message: "a name" }]

/** What a problem answers on the wire: status, code, `Retry-After` (absent: none). */
const answered = (problem: Problem) => {
  const response = problemResponse(problem)
  return { status: response.status, code: problem.code, retryAfter: response.headers["retry-after"] }
}

/** Each reason, and what it answers: the table as clients see it. */
const reasons = [
  [new Resources.InvalidResource({ detail: "bad", errors }), 400, "VALIDATION_ERROR"],
  [new Resources.ResourceNotFound({ kind: "offer", id: "x" }), 404, "NOT_FOUND"],
  [new Resources.ResourceConflict({ detail: "taken" }), 409, "CONFLICT"],
  [new Resources.StaleVersion({ kind: "offer", id: "x", current: "v2" }), 412, "PRECONDITION_FAILED"],
  [new Resources.ChangeNotApplied({ problems: ["broken.yaml"] }), 500, "SERVICE_ERROR"],
  [new Resources.ResourceStoreUnavailable({ detail: "disk full" }), 503, "SERVICE_ERROR", "5"],
  [new TargetGroupNotFound({ targetGroupId: "x" }), 404, "NOT_FOUND"],
  [new OfferNotFound({ offerId: "x" }), 404, "NOT_FOUND"],
  [new Jobs.InvalidJobCursor(), 400, "VALIDATION_ERROR"],
  [new Jobs.JobNotFound({ jobId: "j" }), 404, "NOT_FOUND"],
  [new Jobs.IdempotencyConflict({ key: "k", jobId: "j" }), 409, "CONFLICT"],
  [new Jobs.JobNotFinished({ jobId: "j", status: "running" }), 409, "CONFLICT"],
  [new Jobs.QueueFull({ maxQueued: 3 }), 503, "SERVICE_ERROR", "5"],
  [new Verifications.InvalidVerificationRequest({ detail: "bad", errors }), 400, "VALIDATION_ERROR"],
  [new Verifications.VerificationNotFound({ id: "v" }), 404, "NOT_FOUND"],
  [new Verifications.WrongCode({ attemptsRemaining: 2 }), 400, "INVALID_CODE"],
  [new Verifications.TooManyAttempts({ maxAttempts: 5 }), 400, "TOO_MANY_ATTEMPTS"],
  [new Verifications.VerificationExpired({ expiredAt: "2026-01-01T00:00:00Z" }), 410, "VERIFICATION_EXPIRED"],
  [new Verifications.VerificationNotPending({ status: "verified" }), 409, "VERIFICATION_NOT_PENDING"],
  [new Verifications.RedemptionLimitReached({ limit: 1, window: "30 days" }), 409, "REDEMPTION_LIMIT_REACHED"],
  [new Verifications.ResendTooSoon({ retryAfterSeconds: 20 }), 429, "RESEND_TOO_SOON", "20"],
  [
    new Verifications.TooManyMessages({ limit: 5, window: "1 hour", retryAfterSeconds: 1800 }),
    429,
    "TOO_MANY_MESSAGES",
    "1800"
  ],
  [new Verifications.MailboxLimitReached({ retryAfterSeconds: 3600 }), 429, "TOO_MANY_MESSAGES", "3600"],
  [new Verifications.VerificationUnavailable({ detail: "queue full", retryAfterSeconds: 5 }), 503, "SERVICE_ERROR", "5"]
] as const

const tagsOf = (error: { readonly fields: { readonly reason: { readonly members: ReadonlyArray<unknown> } } }) =>
  error.fields.reason.members.map((member) => (member as { readonly identifier: string }).identifier)

describe("the error table", () => {
  it("has a row for every reason of every service's error", () => {
    const covered = new Set(reasons.map(([reason]) => reason._tag))
    for (const error of [Resources.ResourcesError, ValidationError, Jobs.JobsError, Verifications.VerificationsError]) {
      for (const tag of tagsOf(error)) expect(covered, `${error.name}: ${tag}`).toContain(tag)
    }
  })

  it.each(reasons)("answers %s", (reason, status, code, retryAfter?: string) => {
    expect(answered(problemOfReason(reason))).toEqual({ status, code, retryAfter })
  })

  it("answers a job's cursor and a failed validation with the field at fault", () => {
    expect(problemOfReason(new Jobs.InvalidJobCursor())).toMatchObject({ errors: [{ field: "/query/cursor" }] })
    expect(problemOfReason(new Resources.InvalidResource({ detail: "bad", errors }))).toMatchObject({
      detail: "bad",
      errors
    })
    expect(problemOfReason(new Verifications.WrongCode({ attemptsRemaining: 2 }))).toMatchObject({
      attemptsRemaining: 2
    })
  })

  it("answers every review reason", () => {
    const review = (reason: ReviewsError["reason"]) =>
      answered(reviewsProblem(new ReviewsError({ reason, detail: "d" })))
    expect(ReviewsError.fields.reason.literals.map((reason) => [reason, review(reason)])).toEqual([
      ["invalid-domain", { status: 400, code: "VALIDATION_ERROR", retryAfter: undefined }],
      ["invalid-cursor", { status: 400, code: "VALIDATION_ERROR", retryAfter: undefined }],
      ["not-found", { status: 404, code: "NOT_FOUND", retryAfter: undefined }],
      ["listed", { status: 409, code: "CONFLICT", retryAfter: undefined }],
      ["unavailable", { status: 503, code: "SERVICE_ERROR", retryAfter: "5" }]
    ])
  })

  it("answers every code a job upload is refused with, its field errors kept", () => {
    const upload = (code: JobInputError["code"]) =>
      jobInputProblem(new JobInputError({ reason: "InvalidDocument", code, detail: "d", errors }))
    expect(JobInputError.fields.code.literals.map((code) => answered(upload(code)))).toEqual([
      { status: 400, code: "MALFORMED_JSON", retryAfter: undefined },
      { status: 400, code: "VALIDATION_ERROR", retryAfter: undefined },
      { status: 413, code: "PAYLOAD_TOO_LARGE", retryAfter: undefined },
      { status: 415, code: "UNSUPPORTED_MEDIA_TYPE", retryAfter: undefined }
    ])
    expect(upload("MALFORMED_JSON")).toMatchObject({ errors })
    expect(upload("VALIDATION_ERROR")).toMatchObject({ errors })
  })

  it("answers a job store that cannot be used 503 with the store's Retry-After", () => {
    expect(answered(jobStoreProblem(new JobStoreError({ operation: "create", cause: new Error("EROFS") })))).toEqual({
      status: 503,
      code: "SERVICE_ERROR",
      retryAfter: "5"
    })
  })

  it("fails a handler with the problems its endpoint declares, and answers those with a Retry-After itself", async () => {
    const failed = await Effect.runPromise(
      Effect.flip(answerJobsError(new Jobs.JobsError({ reason: new Jobs.JobNotFound({ jobId: "j" }) })))
    )
    expect(failed).toMatchObject({ _tag: "NotFound", status: 404 })
    const full = await Effect.runPromise(
      answerJobsError(new Jobs.JobsError({ reason: new Jobs.QueueFull({ maxQueued: 1 }) }))
    )
    expect([full.status, full.headers["retry-after"]]).toEqual([503, "5"])
    const soon = new Verifications.VerificationsError({
      reason: new Verifications.ResendTooSoon({ retryAfterSeconds: 7 })
    })
    const resend = await Effect.runPromise(answerVerificationsError(soon))
    expect([resend.status, resend.headers["retry-after"]]).toEqual([429, "7"])
  })
})

describe("a store outage met as a defect", () => {
  it("is a 503 with Retry-After for a file store that cannot be used, not a 500", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "outage-"))
    writeFileSync(JobStoreFiles.jobsDirectory(dataDir), "not a directory")
    const failure = await Effect.runPromise(
      Effect.flip(Effect.flatMap(Effect.service(JobStore), (store) => store.stage())).pipe(
        Effect.provide(JobStoreFiles.layerFiles(dataDir))
      )
    )
    expect(failure).toBeInstanceOf(JobStoreError)
    // As a service that cannot go on without its store hands it on: a defect, the port's error inside.
    const problem = storeOutageProblem(new Error("the job could not be read", { cause: failure }))
    expect(problem && answered(problem)).toEqual({ status: 503, code: "SERVICE_ERROR", retryAfter: "5" })
  })

  it("is recognised for any store's error, and not for a bug", () => {
    expect(storeOutageProblem(new ResourceStoreError({ operation: "write", cause: new Error("EIO") }))).toBeDefined()
    expect(storeOutageProblem(new Error("a bug"))).toBeUndefined()
    expect(storeOutageProblem(undefined)).toBeUndefined()
    // Not by Redis's tag: a RedisError the connection did not fail with is no outage.
    expect(storeOutageProblem(new Redis.RedisError({ cause: new Error("made up") }))).toBeUndefined()
  })
})

describeRedis("a store outage of Redis", () => {
  it("is a command the connection failed, as the adapters hand it on", async () => {
    const failure = await Effect.runPromise(
      Effect.flip(Effect.flatMap(Effect.service(RedisService), (redis) => redis.send("NO-SUCH-COMMAND"))).pipe(
        Effect.provide(testRedisLayer())
      )
    )
    expect(failure._tag).toBe("RedisError")
    const problem = storeOutageProblem(new Error("the store failed", { cause: failure }))
    expect(problem && answered(problem)).toEqual({ status: 503, code: "SERVICE_ERROR", retryAfter: "5" })
  })
})
