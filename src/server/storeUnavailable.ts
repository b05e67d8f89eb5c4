/**
 * The data directory failing a write — disk full, a read-only or broken
 * volume — is the store being down (DESIGN.md: 503 `SERVICE_ERROR` with
 * `Retry-After`), not an unexpected failure: every handler that writes to
 * the data directory answers it the same way, and has accepted nothing.
 */
import * as Effect from "effect/Effect"
import { ServiceUnavailable } from "../api/problems.ts"
import { answerWith } from "./problemResponse.ts"
import { currentRequestId } from "./requestId.ts"

/** How long a client should wait before retrying when the data directory cannot be written. */
const STORE_RETRY_SECONDS = 30

/** A 503 problem as a response, with its `Retry-After` header. */
export const withRetryAfter = (problem: ServiceUnavailable) => answerWith(problem)

const isFileSystemError = (defect: unknown): defect is NodeJS.ErrnoException =>
  defect instanceof Error && /^E[A-Z]+$/.test(String((defect as NodeJS.ErrnoException).code))

/** A handler whose file-system failures answer 503 with `Retry-After`; any other defect stays a 500. */
export const orStoreUnavailable = <A, E, R>(handler: Effect.Effect<A, E, R>) =>
  Effect.catchDefect(handler, (defect) =>
    isFileSystemError(defect)
      ? Effect.flatMap(currentRequestId, (requestId) =>
          withRetryAfter(
            new ServiceUnavailable({
              code: "SERVICE_ERROR",
              detail: `The data directory cannot be written now (${defect.code}); nothing was changed or accepted. Try again later.`,
              requestId,
              retryAfterSeconds: STORE_RETRY_SECONDS
            })
          )
        )
      : Effect.die(defect)
  )
