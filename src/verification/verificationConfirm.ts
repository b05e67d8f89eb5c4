/**
 * Confirming proof of ownership: by the code a person types back, or by
 * opening the link they were sent (`Verifications.ts`). A confirmation that
 * matches finishes the record as verified, with a signed eligibility token,
 * unless the address reached the offer's redemption limit meanwhile (the
 * store decides that with the write); a wrong code counts an attempt.
 * `settle` stores a finished record only if nobody changed it since it was
 * read (and it keeps the limits it names), then counts it and sends its
 * notices; resends and cancellations settle through it too.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Snapshot } from "../app/Snapshot.ts"
import { toView, type VerificationRecord, type VerificationView } from "../domain/Verification.ts"
import { fail, verify, wrongCode } from "../domain/verificationLifecycle.ts"
import type { LimitCheck } from "../domain/verificationLimits.ts"
import { ALL_TEAMS, type Viewer } from "../domain/visibility.ts"
import { parseLinkToken } from "./codes.ts"
import type { VerificationKeys } from "./secrets.ts"
import type { VerificationStoreService } from "./VerificationStore.ts"
import { TooManyAttempts, type VerificationsError, WrongCode } from "./VerificationsError.ts"
import { policyOf } from "./verificationPolicy.ts"
import type { Records } from "./verificationRecords.ts"
import {
  invalid,
  limitRefusal,
  mailboxCapOf,
  notPending,
  redemptionLimits,
  refuse,
  unavailable
} from "./verificationRules.ts"
import type { Tokens } from "./verificationTokens.ts"
import type { Work } from "./verificationWork.ts"

/** What opening a link did, for the page or redirect that answers it. */
export interface LinkOutcome {
  readonly outcome: "verified" | "expired" | "failed" | "invalid"
  readonly locale: string
  readonly verification?: VerificationView | undefined
  readonly redirectUrl?: string | undefined
}

export interface ConfirmDependencies {
  readonly store: VerificationStoreService
  readonly records: Records
  readonly keys: VerificationKeys
  readonly snapshots: Snapshot["Service"]
  readonly tokens: Tokens
  readonly work: Work
  /** Counts a finished record in its offer's usage statistics. */
  readonly count: (record: VerificationRecord, event: "started" | "verified" | "failed" | "expired") => void
  /** Whether the record's policy sends a webhook on its changes. */
  readonly notifies: (record: VerificationRecord) => boolean
  /** The record if the viewer may see it, a pending one past its lifetime expired first (`held`: its lock is held). */
  readonly visible: (viewer: Viewer, id: string, held: boolean) => Effect.Effect<VerificationRecord, VerificationsError>
}

export const makeConfirmations = (dependencies: ConfirmDependencies) => {
  const { store, records, keys, snapshots, tokens, work, count, notifies, visible } = dependencies

  /**
   * Stores `next` over the version it was computed from, if it keeps
   * `limits` (else `LimitExceeded`, nothing stored). One compare-and-set,
   * not retried: a change computed on a version another process changed
   * meanwhile (a wrong code counted by another daemon) must not be answered
   * as if it counted.
   */
  const replace = (next: VerificationRecord, limits?: ReadonlyArray<LimitCheck>) =>
    store.replace(next, limits).pipe(
      Effect.catchTag("VerificationStoreError", (error) =>
        unavailable(`The verification could not be stored (${error.message}). Try again.`)
      ),
      Effect.flatMap((written) =>
        written ? Effect.succeed(next) : unavailable("The verification changed meanwhile. Try again.")
      )
    )

  /** Counts a stored record that ended and sends its notices; fails with `refused` if any. */
  const settled = Effect.fnUntraced(function* (next: VerificationRecord, refused?: VerificationsError["reason"]) {
    if (next.status !== "pending") {
      count(next, next.status === "verified" ? "verified" : next.status === "failed" ? "failed" : "expired")
      yield* work.notify(next)
    }
    if (refused !== undefined) return yield* refuse(refused)
    return next
  })

  /** Stores a finished (or renewed) record over the version it was computed from, then `settled`. */
  const settle = (next: VerificationRecord, refused?: VerificationsError["reason"]) =>
    Effect.flatMap(
      // No limits: nothing can be refused.
      replace(next).pipe(Effect.catchTag("LimitExceeded", Effect.die)),
      () => settled(next, refused)
    )

  /** `settle` if the write keeps `limits`; else it fails with `LimitExceeded`, and nothing was stored. */
  const settleWithin = (next: VerificationRecord, limits: ReadonlyArray<LimitCheck>) =>
    Effect.flatMap(replace(next, limits), () => settled(next))

  /**
   * Finishes a pending record whose code or link matched: verified with a
   * signed token, unless the offer's redemption limit refuses the write (the
   * store decides it with the write, so of concurrent confirmations only as
   * many as the limit allows pass); then it fails, and `refused` says why.
   */
  const finishVerified = Effect.fnUntraced(function* (record: VerificationRecord, now: number, counted: boolean) {
    const policy = policyOf(snapshots.current(), record)
    const validUntil = now + policy.validForMs
    const token = yield* tokens
      .issue(record, validUntil, now)
      .pipe(
        Effect.catch((error) => unavailable(`The eligibility token could not be signed (${error.message}). Try again.`))
      )
    const verified = verify(record, token, validUntil, now, counted, notifies(record))
    return yield* settleWithin(verified, redemptionLimits(verified, policy, now)).pipe(
      Effect.map((stored) => ({ stored, refused: undefined })),
      Effect.catchTag("LimitExceeded", (exceeded) => {
        const refused = limitRefusal(exceeded, verified, policy, mailboxCapOf(snapshots.current()), now)
        return Effect.map(settle(fail(record, "REDEMPTION_LIMIT_REACHED", now, notifies(record))), (stored) => ({
          stored,
          refused
        }))
      })
    )
  })

  const confirm = Effect.fn("Verifications.confirm")(function* (viewer: Viewer, id: string, code: string) {
    return yield* records.locked(
      id,
      Effect.gen(function* () {
        const record = yield* visible(viewer, id, true)
        if (record.status !== "pending") return toView(yield* notPending(record))
        if (record.method !== "code") {
          return yield* invalid("/code", "LINK_METHOD", "this verification is confirmed by opening its link")
        }
        const now = yield* Clock.currentTimeMillis
        const matches = record.secretHash !== undefined && keys.secretMatches(id, code, record.secretHash)
        if (!matches) {
          const next = wrongCode(record, now, notifies(record))
          const remaining = Math.max(0, next.maxAttempts - next.attempts)
          return toView(
            yield* settle(
              next,
              next.status === "failed"
                ? new TooManyAttempts({ maxAttempts: next.maxAttempts })
                : new WrongCode({ attemptsRemaining: remaining })
            )
          )
        }
        const { stored, refused } = yield* finishVerified(record, now, true)
        if (refused !== undefined) return yield* refuse(refused)
        return toView(stored)
      })
    )
  })

  const confirmLink = (token: string): Effect.Effect<LinkOutcome> =>
    Effect.gen(function* () {
      const fallbackLocale = snapshots.current().config.settings.verification.locale
      const parts = parseLinkToken(token)
      if (parts === undefined) return { outcome: "invalid" as const, locale: fallbackLocale }
      return yield* records.locked(
        parts.id,
        Effect.gen(function* () {
          const record = yield* visible(ALL_TEAMS, parts.id, true)
          const genuine =
            record.secretHash !== undefined && keys.secretMatches(record.id, parts.secret, record.secretHash)
          const answer = (outcome: LinkOutcome["outcome"], shown: VerificationRecord) => ({
            outcome,
            locale: shown.locale,
            verification: toView(shown),
            ...(shown.redirectUrl === undefined ? {} : { redirectUrl: shown.redirectUrl })
          })
          // Without the secret, a link says nothing of its verification: not even that it ended.
          if (!genuine || record.method !== "link") return { outcome: "invalid" as const, locale: fallbackLocale }
          if (record.status === "verified") return answer("verified", record)
          if (record.status === "expired") return answer("expired", record)
          if (record.status !== "pending") return answer("failed", record)
          const now = yield* Clock.currentTimeMillis
          const { stored } = yield* finishVerified(record, now, false)
          return answer(stored.status === "verified" ? "verified" : "failed", stored)
        })
      )
    }).pipe(
      Effect.catch(() =>
        Effect.succeed({
          outcome: "invalid" as const,
          locale: snapshots.current().config.settings.verification.locale
        })
      )
    )

  return { settle, settleWithin, confirm, confirmLink }
}
