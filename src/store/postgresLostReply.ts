/**
 * A PostgreSQL write whose reply was lost: the connection dropped (or the
 * answer came too late) after the statement was sent, so the server may
 * have committed it, or not. Answering such a write as failed tells the
 * caller that nothing was stored when it was — a verification confirmed
 * but answered 503 (its retry then finds it no longer pending, and its
 * count is never made), a job stored twice when its submit is retried.
 *
 * `settlingLostReply` asks the database once more, on a connection of the
 * pool (a new one after a drop), whether the write is there — a row only
 * this write could have made, looked up by what it wrote — and answers the
 * write's outcome when it is; else, or when that question fails too, the
 * write's own failure stands. So a write answered as failed was not
 * stored, except where the server is unreachable right after the write
 * (the question cannot be asked), or the old connection's commit lands
 * after the question: those stay ambiguous, as with any network store.
 */
import * as Effect from "effect/Effect"
import { STATEMENT_TIMEOUT_MS } from "./postgres.ts"

/**
 * `write`, or `outcome` when it failed with an outage but `stored` (asked
 * after the failure) finds what it wrote.
 */
export const settlingLostReply = <A, E, R, R2>(
  write: Effect.Effect<A, E, R>,
  stored: Effect.Effect<boolean, unknown, R2>,
  outcome: A
): Effect.Effect<A, E, R | R2> =>
  Effect.catch(write, (error) =>
    // Bounded in time, past the breaker: the write's failure may have opened it, and this question is its answer.
    Effect.timeout(stored, STATEMENT_TIMEOUT_MS).pipe(
      Effect.orElseSucceed(() => false),
      Effect.flatMap((found) => (found ? Effect.succeed(outcome) : Effect.fail(error)))
    )
  )
