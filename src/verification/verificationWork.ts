/**
 * The `Verifications` service's work in the background:
 * - **sending**: the send queue's `process` composes the message in the
 *   verification's locale and hands it to the mail transport; a failure for
 *   now keeps the verification pending and is retried with backoff (1 s,
 *   2 s, 4 s, ... at most 5 minutes) until it expires, a refusal (5xx) gives
 *   the message up. A message queued before a restart has lost its code
 *   (codes are never stored): it gets a new one, stored as a hash first.
 * - **notices**: each event a verification owes its webhook is POSTed with
 *   the shared signed delivery (`webhooks/delivery.ts`) and marked delivered;
 *   one not delivered is tried again at each sweep, up to `MAX_NOTICE_ATTEMPTS`.
 * - **the sweep**, at start and every `verification.sweepInterval`:
 *   verifications past their lifetime expire, queued messages not in the
 *   queue are queued (after a restart, or when it was full), reminders fall
 *   due, finished verifications past their retention are deleted, and the
 *   signing key is rotated when due.
 * Log lines name the verification, never the address or the code.
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ConfigSnapshot, Snapshot } from "../app/Snapshot.ts"
import type { VerificationRecord } from "../domain/Verification.ts"
import { periodMillis } from "../domain/VerificationPolicy.ts"
import {
  claimDelivery,
  claimedByOther,
  expire,
  isDue,
  noticeAttempted,
  remind,
  sendFailed,
  sent
} from "../domain/verificationLifecycle.ts"
import { messageTimes } from "../domain/verificationLimits.ts"
import type { UsageStatistics } from "../stats/UsageStatistics.ts"
import { type DeliveryOptions, deliverCallback } from "../webhooks/delivery.ts"
import { linkToken, newCode, newLinkSecret } from "./codes.ts"
import type { MailTransportService } from "./MailTransport.ts"
import { renderMessage } from "./messages.ts"
import { makeSendQueue, type Processed, type SendQueue, sendBackoffMs } from "./SendQueue.ts"
import type { VerificationKeys } from "./secrets.ts"
import type { VerificationStoreService } from "./VerificationStore.ts"
import { policyOf } from "./verificationPolicy.ts"
import type { Records } from "./verificationRecords.ts"
import { mailboxCapOf } from "./verificationRules.ts"
import type { Tokens } from "./verificationTokens.ts"

/** Notice deliveries (each of up to six attempts) before a notice is given up. */
export const MAX_NOTICE_ATTEMPTS = 12

/** A message to send: the verification, and its secret when this process made it. */
export interface SendItem {
  readonly id: string
  readonly secret?: string | undefined
}

export interface WorkContext {
  readonly store: VerificationStoreService
  readonly records: Records
  readonly snapshots: Snapshot["Service"]
  readonly keys: VerificationKeys
  readonly transport: MailTransportService
  readonly usage: UsageStatistics["Service"]
  readonly tokens: Tokens
  readonly webhookSecret: string
  /** The daemon's public address, links are `<base>/v/<token>`. */
  readonly publicUrl: () => string
  readonly webhookDelivery?: DeliveryOptions | undefined
}

/**
 * How long a process holds a message's delivery while it sends it: longer
 * than one SMTP attempt may take (30 s), so another daemon takes over only
 * from a process that died.
 */
const CLAIM_MS = 120_000

export interface Work {
  readonly queue: SendQueue<SendItem>
  /** The claim on a message's delivery this process takes at `now` (daemons sharing a store send each message once). */
  claimFor(now: number): { readonly by: string; readonly until: number }
  /** Queues the message of a verification (false when the queue is full). */
  send(item: SendItem): boolean
  /** The work of one sweep (the layer runs it at start and on an interval). */
  readonly sweep: Effect.Effect<void>
  /** Delivers the verification's owed notices in the background. */
  notify(record: VerificationRecord): Effect.Effect<void>
}

const countEvent = (context: WorkContext, record: VerificationRecord, event: "expired" | "sent" | "messagesSent") => {
  if (record.offerId !== undefined) context.usage.recordVerification(record.offerId, event)
}

/**
 * What the work of this process keeps beside its context: its name as the
 * holder of delivery claims, the scope notices are delivered in, and the
 * messages it has queued and the verifications whose notices it is delivering.
 */
interface WorkState {
  readonly context: WorkContext
  /** This process, as the holder of delivery claims. */
  readonly self: string
  readonly scope: Scope.Scope
  readonly queued: Set<string>
  readonly delivering: Set<string>
}

const claimFor = (state: WorkState, now: number) => ({ by: state.self, until: now + CLAIM_MS })

/**
 * Whether `self` holds the record's delivery for at least half a claim more:
 * longer than a send attempt, so it is sent without writing the claim again.
 * A start stores its record claimed by the process that queues its message
 * (`claimFor`), so a message sent soon after its start costs the journal one
 * write less (measured: `npm run bench:verifications`).
 */
const holdsClaim = (record: VerificationRecord, self: string, now: number): boolean => {
  const claim = record.delivery.claim
  return record.delivery.state === "queued" && claim?.by === self && claim.until - now >= CLAIM_MS / 2
}

/** A claim time that has lapsed for a claim of another process: with a store no one else uses, every such claim. */
const othersLapsedBy = (state: WorkState, now: number) => (state.context.store.shared ? now : Number.POSITIVE_INFINITY)

/** Whether `record`'s current code or link is `secret`: a message for an older one is stale. */
const isCurrentSecret = (keys: VerificationKeys, record: VerificationRecord, secret: string) =>
  record.secretHash === keys.secretHash(record.id, secret)

/** Composes the verification's message in its locale and hands it to the transport; `address` false: it cannot be unsealed. */
const composeAndSend = Effect.fnUntraced(function* (
  context: WorkContext,
  record: VerificationRecord,
  secret: string,
  now: number
) {
  const { keys, snapshots, transport } = context
  const address = keys.unseal(record.sealedAddress ?? "")
  if (address === undefined) return { address: false as const }
  const { config, engine } = snapshots.current()
  const offer = record.offerId === undefined ? undefined : engine.offers.get(record.offerId)?.offer
  const group = engine.targetGroups.get(record.targetGroupId)?.targetGroup
  const parts = renderMessage(record.locale, record.method, config.templates, {
    offer: offer?.name ?? group?.name ?? record.targetGroupId,
    institution: record.institution?.name ?? record.domain,
    minutes: String(Math.max(1, Math.ceil((record.expiresAt - now) / 60_000))),
    code: record.method === "code" ? secret : undefined,
    link: record.method === "link" ? `${context.publicUrl()}/v/${linkToken(record.id, secret)}` : undefined
  })
  return yield* transport
    .send({ verificationId: record.id, from: config.settings.verification.mail.from, to: address, ...parts })
    .pipe(
      Effect.result,
      Effect.map((outcome) => ({ address: true as const, outcome }))
    )
})

/**
 * The send queue's work on one message: claim its delivery, send it (with a
 * new code when this process did not make the current one), and record the
 * outcome; a failure for now is retried after its backoff.
 */
const processItem = (state: WorkState, item: SendItem): Effect.Effect<Processed<SendItem>> =>
  Effect.gen(function* () {
    const { context, self } = state
    const { store, records, snapshots, keys, transport } = context
    const now = yield* Clock.currentTimeMillis
    let record = yield* store.get(item.id)
    if (record === undefined || record.status !== "pending" || record.delivery.state !== "queued") return undefined
    if (isDue(record, now)) return undefined
    let secret = item.secret
    // Taken (or renewed) before sending: a message another live daemon holds is its to send.
    const fresh =
      secret === undefined
        ? record.method === "code"
          ? newCode(policyOf(snapshots.current(), record).codeLength)
          : newLinkSecret()
        : undefined
    record = yield* records.modify(item.id, (latest) =>
      latest.status === "pending" && !(fresh === undefined && holdsClaim(latest, self, now))
        ? claimDelivery(
            latest,
            self,
            now + CLAIM_MS,
            othersLapsedBy(state, now),
            fresh === undefined ? undefined : keys.secretHash(latest.id, fresh)
          )
        : undefined
    )
    if (record === undefined || record.delivery.claim?.by !== self) return undefined
    secret ??= fresh!
    const attempt = yield* composeAndSend(context, record, secret, now)
    if (!attempt.address) {
      yield* records.modify(item.id, (current) => sendFailed(current, "the sealed address cannot be opened", true))
      yield* Effect.logError(
        "verification message given up: its address cannot be unsealed (was the verification secret changed?)",
        {
          verificationId: item.id
        }
      )
      return undefined
    }
    if (attempt.outcome._tag === "Success") {
      // A resend may have replaced the code meanwhile: then its own message is still to go.
      const after = yield* records.modify(item.id, (latest) =>
        isCurrentSecret(keys, latest, secret) ? sent(latest, now) : undefined
      )
      if (after !== undefined) {
        countEvent(context, after, "messagesSent")
        // The funnel's middle step: the verification's first message is out (resends count above only).
        if (after.sentAt.length === 1) countEvent(context, after, "sent")
      }
      yield* Effect.logInfo("verification message sent", {
        verificationId: item.id,
        transport: transport.description
      })
      return undefined
    }
    const failure = attempt.outcome.failure
    const retryAfterMs = sendBackoffMs(record.delivery.attempts + 1)
    // Held through the backoff by this process, which retries it.
    const retryClaim = failure.permanent ? undefined : { by: self, until: now + retryAfterMs + CLAIM_MS }
    const after = yield* records.modify(item.id, (latest) =>
      isCurrentSecret(keys, latest, secret)
        ? sendFailed(latest, failure.detail, failure.permanent, retryClaim)
        : undefined
    )
    const attempts = after?.delivery.attempts ?? 1
    yield* Effect.logWarning(
      failure.permanent ? "verification message refused; not retried" : "verification message not sent; retrying",
      {
        verificationId: item.id,
        error: failure.detail,
        attempt: attempts,
        ...(failure.permanent ? {} : { retryInSeconds: retryAfterMs / 1000 })
      }
    )
    return failure.permanent ? undefined : { retryAfterMs, item: { id: item.id, secret } }
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.as(Effect.logError("verification message could not be processed", { verificationId: item.id, cause }), {
        retryAfterMs: sendBackoffMs(1)
      })
    ),
    Effect.map((processed) => {
      if (processed === undefined) state.queued.delete(item.id)
      return processed
    })
  )

/** Posts the verification's owed notices to its webhook, one after the other, until one is not delivered. */
const deliverNotices = (context: WorkContext, id: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { store, records, snapshots } = context
    for (;;) {
      const record = yield* store.get(id)
      if (record === undefined) return
      const index = record.notices.findIndex((notice) => !notice.delivered && notice.attempts < MAX_NOTICE_ATTEMPTS)
      if (index < 0) return
      const notice = record.notices[index]!
      const url = policyOf(snapshots.current(), record).webhookUrl
      if (url === undefined) return
      const payload = {
        type: notice.event,
        verificationId: record.id,
        ...(record.offerId === undefined ? {} : { offerId: record.offerId }),
        targetGroupId: record.targetGroupId,
        status: record.status,
        occurredAt: new Date(notice.at).toISOString(),
        ...(record.validUntil === undefined ? {} : { validUntil: new Date(record.validUntil).toISOString() })
      }
      let delivered = false
      yield* deliverCallback(url, payload, context.webhookSecret, {
        // Webhooks go where job callbacks may go: public addresses, unless the operator allows more.
        policy: snapshots.current().config.settings.jobs.callbacks,
        ...context.webhookDelivery,
        onAttempt: (attempt) => {
          delivered = attempt.delivered
          return records
            .modify(id, (current) => noticeAttempted(current, index, delivered))
            .pipe(
              Effect.catch(() => Effect.void),
              Effect.asVoid
            )
        }
      }).pipe(
        Effect.catchTag("CallbackDeliveryError", (error) =>
          Effect.logWarning("verification notice not delivered", {
            verificationId: id,
            event: notice.event,
            webhook: URL.parse(url)?.origin ?? "(not a URL)",
            attempts: error.attempts
          })
        )
      )
      if (!delivered) return
    }
  }).pipe(Effect.catchCause((cause) => Effect.logError("verification notice failed", { verificationId: id, cause })))

/** Delivers the verification's owed notices in the background, once at a time for each verification. */
const notify = (state: WorkState, record: VerificationRecord): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { delivering } = state
    if (delivering.has(record.id) || !record.notices.some((notice) => !notice.delivered)) return Effect.void
    delivering.add(record.id)
    return Effect.asVoid(
      Effect.forkIn(
        deliverNotices(state.context, record.id).pipe(Effect.ensuring(Effect.sync(() => delivering.delete(record.id)))),
        state.scope
      )
    )
  })

/** A finished record is kept for its retention, and as long as the limits count its units. */
const keepUntil = (snapshot: ConfigSnapshot, record: VerificationRecord): number => {
  const policy = policyOf(snapshot, record)
  const finished = record.finishedAt ?? record.createdAt
  let until = finished + periodMillis(snapshot.config.settings.verification.retention)
  const lastMessage = Math.max(0, ...messageTimes(record))
  until = Math.max(until, lastMessage + Math.max(policy.messageWindowMs, mailboxCapOf(snapshot).windowMs))
  if (record.status === "verified") {
    until = Math.max(until, record.validUntil ?? 0, finished + policy.redemptionWindowMs)
  }
  return until
}

/** The sweep's work on one verification: expire it, queue its message, remind, delete it, or deliver its notices. */
const sweepOne = (state: WorkState, send: (item: SendItem) => boolean, record: VerificationRecord, now: number) =>
  Effect.gen(function* () {
    const { context, queued, self } = state
    const { records, snapshots, store } = context
    const policy = policyOf(snapshots.current(), record)
    if (isDue(record, now)) {
      const after = yield* records.modify(record.id, (current) =>
        isDue(current, now) ? expire(current, policy.webhookUrl !== undefined) : undefined
      )
      if (after?.status === "expired") {
        countEvent(context, after, "expired")
        yield* Effect.logInfo("verification expired", { verificationId: record.id })
        yield* notify(state, after)
      }
      return
    }
    if (
      record.status === "pending" &&
      record.delivery.state === "queued" &&
      !queued.has(record.id) &&
      !claimedByOther(record, self, othersLapsedBy(state, now))
    )
      send({ id: record.id })
    if (
      record.status === "verified" &&
      policy.reminderBeforeMs !== undefined &&
      policy.webhookUrl !== undefined &&
      record.validUntil !== undefined &&
      now >= record.validUntil - policy.reminderBeforeMs &&
      now < record.validUntil &&
      !record.notices.some((notice) => notice.event === "verification.reminder")
    ) {
      const after = yield* records.modify(record.id, (current) => remind(current, now))
      if (after !== undefined) yield* notify(state, after)
      return
    }
    if (record.status !== "pending" && now >= keepUntil(snapshots.current(), record)) {
      yield* store.remove(record.id)
      return
    }
    if (record.notices.some((notice) => !notice.delivered && notice.attempts < MAX_NOTICE_ATTEMPTS))
      yield* notify(state, record)
  })

/** One sweep over every verification, then the signing key's rotation when due. */
const sweep = (state: WorkState, send: (item: SendItem) => boolean) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    for (const record of yield* state.context.store.list()) {
      yield* sweepOne(state, send, record, now).pipe(
        Effect.catchCause((cause) =>
          Effect.logError("verification sweep failed for one verification", { verificationId: record.id, cause })
        )
      )
    }
    yield* state.context.tokens
      .rotateIfDue()
      .pipe(Effect.catchCause((cause) => Effect.logError("signing key rotation failed", { cause })))
  })

export const makeWork = (context: WorkContext): Effect.Effect<Work, never, Scope.Scope> =>
  Effect.gen(function* () {
    const state: WorkState = {
      context,
      self: randomUUID(),
      scope: yield* Effect.scope,
      queued: new Set<string>(),
      delivering: new Set<string>()
    }
    const { mail } = context.snapshots.current().config.settings.verification
    const queue = yield* makeSendQueue<SendItem>({
      concurrency: mail.concurrency,
      maxQueued: mail.maxQueued,
      process: (item) => processItem(state, item)
    })
    const send = (item: SendItem): boolean => {
      if (!queue.offer(item)) return false
      state.queued.add(item.id)
      return true
    }
    return {
      queue,
      claimFor: (now) => claimFor(state, now),
      send,
      sweep: sweep(state, send),
      notify: (record) => notify(state, record)
    }
  })
