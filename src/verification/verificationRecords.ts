/**
 * Changing verification records safely: changes to one verification run
 * one at a time in this process (a lock per id, dropped when idle), each
 * reading the record, computing the next version and storing it over the
 * version it read. Another process sharing the store can still win the
 * race; then the change is computed again on what it wrote (a few times,
 * then it is a defect: something writes the record in a loop).
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { VerificationRecord } from "../domain/Verification.ts"
import type { LimitCheck } from "../domain/verificationLimits.ts"
import type { LimitExceeded, VerificationStoreError, VerificationStoreService } from "./VerificationStore.ts"

const MAX_RACES = 5

export interface Records {
  /** Runs `body` with the verification's lock held. */
  locked<A, E, R>(id: string, body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
  /**
   * Applies `change` to the stored record and stores the result (unless it
   * answers undefined: no change) if it keeps `limits`; answers the record
   * as stored after, or undefined when there is none. Takes the lock unless
   * `held`.
   */
  modify<E = never>(
    id: string,
    change: Change<E>,
    held?: boolean
  ): Effect.Effect<VerificationRecord | undefined, E | VerificationStoreError>
  modify<E = never>(
    id: string,
    change: Change<E>,
    held: boolean,
    limits: ReadonlyArray<LimitCheck>
  ): Effect.Effect<VerificationRecord | undefined, E | VerificationStoreError | LimitExceeded>
}

/** A change to a record: its next version, or undefined for none. */
type Change<E> = (
  record: VerificationRecord
) => Effect.Effect<VerificationRecord | undefined, E> | VerificationRecord | undefined

export const makeRecords = (store: VerificationStoreService): Records => {
  const locks = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
  const locked = <A, E, R>(id: string, body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let lock = locks.get(id)
      if (lock === undefined) {
        lock = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
        locks.set(id, lock)
      }
      const entry = lock
      entry.users++
      return entry.semaphore.withPermit(body).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (--entry.users === 0) locks.delete(id)
          })
        )
      )
    })
  const attempt = <E>(
    id: string,
    change: Change<E>,
    limits: ReadonlyArray<LimitCheck> | undefined,
    races: number
  ): Effect.Effect<VerificationRecord | undefined, E | VerificationStoreError | LimitExceeded> =>
    Effect.gen(function* () {
      const current = yield* store.get(id)
      if (current === undefined) return undefined
      const computed = change(current)
      const next = Effect.isEffect(computed) ? yield* computed : computed
      if (next === undefined) return current
      if (yield* store.replace(next, limits)) return next
      if (races >= MAX_RACES)
        return yield* Effect.die(new Error(`verification ${id} changed ${MAX_RACES} times under one change`))
      return yield* attempt(id, change, limits, races + 1)
    })
  const modify = <E>(id: string, change: Change<E>, held = false, limits?: ReadonlyArray<LimitCheck>) =>
    held ? attempt(id, change, limits, 0) : locked(id, attempt(id, change, limits, 0))
  return { locked, modify } as Records
}
