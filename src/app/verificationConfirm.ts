/**
 * Confirming proof of ownership: by the code a person types back, or by
 * opening the link they were sent (`Verifications.ts`). A confirmation that
 * matches finishes the record as verified, with a signed eligibility token,
 * unless the address reached the offer's redemption limit meanwhile; a
 * wrong code counts an attempt. `settle` stores a finished record only if
 * nobody changed it since it was read, then counts it and sends its
 * notices; resends and cancellations settle through it too.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { toView, type VerificationRecord, type VerificationView } from "../domain/Verification.ts"
import { fail, verify, wrongCode } from "../domain/verificationLifecycle.ts"
import { ALL_TEAMS, type Viewer } from "../domain/visibility.ts"
import { parseLinkToken } from "../verification/codes.ts"
import type { VerificationKeys } from "../verification/secrets.ts"
import type { VerificationStoreService } from "../verification/VerificationStore.ts"
import type { Snapshot } from "./Snapshot.ts"
import { TooManyAttempts, type VerificationsError, WrongCode } from "./VerificationsError.ts"
import { policyOf } from "./verificationPolicy.ts"
import type { Records } from "./verificationRecords.ts"
import { invalid, limitReached, notPending, refuse, unavailable } from "./verificationRules.ts"
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

  const finishVerified = Effect.fnUntraced(function* (record: VerificationRecord, now: number, counted: boolean) {
    const policy = policyOf(snapshots.current(), record)
    const others = yield* store.byAddress(record.addressHash)
    const limit = limitReached(
      others.filter((other) => other.id !== record.id),
      record.offerId,
      policy,
      now
    )
    if (limit !== undefined) {
      return { record: fail(record, "REDEMPTION_LIMIT_REACHED", now, notifies(record)), refused: limit }
    }
    const validUntil = now + policy.validForMs
    const token = yield* tokens
      .issue(record, validUntil, now)
      .pipe(
        Effect.catch((error) => unavailable(`The eligibility token could not be signed (${error.message}). Try again.`))
      )
    return { record: verify(record, token, validUntil, now, counted, notifies(record)), refused: undefined }
  })

  /** Stores a finished record, counts it, sends its notices; fails with `refused` if any. */
  const settle = Effect.fnUntraced(function* (next: VerificationRecord, refused?: VerificationsError["reason"]) {
    const stored = yield* records
      .modify(next.id, (current) => (current.version === next.version - 1 ? next : undefined), true)
      .pipe(Effect.catch((error) => unavailable(`The verification could not be stored (${error.message}). Try again.`)))
    if (stored === undefined || stored.version !== next.version)
      return yield* unavailable("The verification changed meanwhile. Try again.")
    if (next.status !== "pending") {
      count(next, next.status === "verified" ? "verified" : next.status === "failed" ? "failed" : "expired")
      yield* work.notify(next)
    }
    if (refused !== undefined) return yield* refuse(refused)
    return next
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
        const { record: next, refused } = yield* finishVerified(record, now, true)
        return toView(yield* settle(next, refused))
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
          if (record.status === "verified")
            return genuine ? answer("verified", record) : { outcome: "invalid" as const, locale: record.locale }
          if (record.status === "expired") return answer("expired", record)
          if (record.status !== "pending") return answer("failed", record)
          if (!genuine || record.method !== "link") return { outcome: "invalid" as const, locale: record.locale }
          const now = yield* Clock.currentTimeMillis
          const { record: next, refused } = yield* finishVerified(record, now, false)
          const stored = yield* settle(next, refused).pipe(Effect.catch(() => Effect.succeed(next)))
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

  return { settle, confirm, confirmLink }
}
