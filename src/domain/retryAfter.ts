/**
 * How long a caller is told to wait before it tries again (`Retry-After`,
 * in whole seconds), one named duration per cause: the one table of them.
 * The HTTP problems take theirs from here (`api/problems.ts`), and so does
 * a reason a library caller sees (`VerificationUnavailable`), so a cause
 * has one wait whichever way it is met. Waits that follow from the
 * caller's own use — a rate-limit window, a verification's resend cooldown
 * or message window — are computed where they are decided, not listed.
 */

export const RETRY_AFTER_SECONDS = {
  /**
   * A store cannot be used now — unreachable or stalled, a full disk, a
   * read-only or broken volume — whatever its kind (`store/outage.ts`).
   */
  storeUnavailable: 5,
  /**
   * The shared store came back empty or replaced (`store/storeIdentity.ts`):
   * an operator restores it; asking again sooner changes nothing.
   */
  storeLost: 60,
  /** A queue of waiting work is full: the job queue, the verification messages' send queue. */
  queueFull: 5,
  /** The calling key already sends as many job uploads as it may (`limits.jobUploadsPerKey`). */
  uploadsBusy: 1,
  /** The files a page is served from (the console, the docs page's script) have not been built. */
  notBuilt: 60
} as const

/** A cause a caller is told to wait out. */
export type RetryCause = keyof typeof RETRY_AFTER_SECONDS
