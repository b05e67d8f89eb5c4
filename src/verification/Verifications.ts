/**
 * The `verification/` slice holds proof of ownership whole: its stores
 * (records, signing keys), the send queue, mail transport and outbox, and
 * its application logic over the core (`app/`: `Validation`, the
 * snapshot) — this file and the `verification*.ts` files beside it, which
 * the slice's other files never import.
 *
 * Proof of ownership, as every transport asks for it (HTTP handlers, the
 * link page, the library facade, the CLI): start a verification, confirm
 * it with its code or link, read, resend, cancel, look an address up, reset
 * an address's redemption limit, and publish the signing keys.
 *
 * Rules, each written once:
 * - eligibility first, by `Validation` (the team rule and usage recording
 *   included): an ineligible address gets the normal failed result and no
 *   message;
 * - the offer's policy (`verificationPolicy.ts`) decides methods, lifetimes,
 *   attempts, cooldowns, message and redemption limits, redirect origins
 *   and the webhook; the lifecycle (`domain/verificationLifecycle.ts`) how a
 *   record changes;
 * - a start is accepted once its record is stored (so nothing accepted is
 *   lost) and its message queued; only when neither can be done is it
 *   refused (`VerificationUnavailable`, 503);
 * - codes and link secrets exist in memory only until sent; stored are
 *   their keyed hashes, compared in constant time (`verification/secrets.ts`);
 * - time is Effect's `Clock`, so expiry, cooldowns and windows are tested
 *   with `TestClock`.
 * Changes to one verification run one at a time (`verificationRecords.ts`);
 * the refusals and the record a start stores are in `verificationRules.ts`,
 * confirming by code or link in `verificationConfirm.ts`, look-ups and
 * limit resets by address in `verificationLookups.ts`.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { JSONWebKeySet } from "jose"
import { Snapshot } from "../app/Snapshot.ts"
import { Validation, ValidationError } from "../app/Validation.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { toView, type VerificationRecord, type VerificationView } from "../domain/Verification.ts"
import { periodMillis, type VerificationMethod } from "../domain/VerificationPolicy.ts"
import { cancel, expire, isDue, renew } from "../domain/verificationLifecycle.ts"
import { type Viewer, verificationVisible } from "../domain/visibility.ts"
import { UsageStatistics } from "../stats/UsageStatistics.ts"
import type { DeliveryOptions } from "../webhooks/delivery.ts"
import { newCode, newLinkSecret, newVerificationId } from "./codes.ts"
import { MailTransport } from "./MailTransport.ts"
import { SigningKeyStore } from "./SigningKeyStore.ts"
import { verificationKeys } from "./secrets.ts"
import { VerificationStore } from "./VerificationStore.ts"
import { ResendTooSoon, VerificationNotFound, type VerificationsError } from "./VerificationsError.ts"
import { type ConfirmDependencies, type LinkOutcome, makeConfirmations } from "./verificationConfirm.ts"
import { makeLookups } from "./verificationLookups.ts"
import { policyOf } from "./verificationPolicy.ts"
import { makeRecords } from "./verificationRecords.ts"
import {
  alreadyRedeemed,
  canonicalOf,
  invalid,
  limitRefusal,
  mailboxCapOf,
  messageLimits,
  methodOf,
  normalizedOf,
  notPending,
  pendingRecord,
  refuse,
  seconds,
  unavailable
} from "./verificationRules.ts"
import { makeTokens } from "./verificationTokens.ts"
import { makeWork } from "./verificationWork.ts"

export interface StartVerification {
  readonly email: string
  readonly offerId?: string | undefined
  readonly targetGroupId?: string | undefined
  /** Default: the first of the offer's methods (`code` unless configured otherwise). */
  readonly method?: VerificationMethod | undefined
  readonly locale?: string | undefined
  /** Where the link redirects after confirming (link method; an origin the offer allows). */
  readonly redirectUrl?: string | undefined
}

export type { LinkOutcome }

export type StartOutcome =
  | {
      readonly started: VerificationView
      /** The address, sealed with the deployment's key: what `person` takes to tell a relying party the address. */
      readonly sealedAddress: string
    }
  | { readonly ineligible: ValidationResult | OfferValidationResult }

export interface VerificationsService {
  start(viewer: Viewer, request: StartVerification): Effect.Effect<StartOutcome, VerificationsError>
  get(viewer: Viewer, id: string): Effect.Effect<VerificationView, VerificationsError>
  confirm(viewer: Viewer, id: string, code: string): Effect.Effect<VerificationView, VerificationsError>
  /** Opening a link (no API key: the link's secret is the credential). */
  confirmLink(token: string): Effect.Effect<LinkOutcome>
  resend(viewer: Viewer, id: string): Effect.Effect<VerificationView, VerificationsError>
  cancel(viewer: Viewer, id: string): Effect.Effect<VerificationView, VerificationsError>
  /** The current (verified, not yet expired) verification of an address for an offer or target group. */
  lookup(
    viewer: Viewer,
    email: string,
    target: { readonly offerId: string } | { readonly targetGroupId: string }
  ): Effect.Effect<VerificationView | undefined, VerificationsError>
  /**
   * Who verified `id`, as one relying party (`audience`) may know them: a
   * pseudonym stable per person and audience (never the address), and the
   * address when `sealedAddress` (from `start`) is the one verified.
   */
  person(
    viewer: Viewer,
    id: string,
    audience: string,
    sealedAddress: string | undefined
  ): Effect.Effect<VerifiedPerson, VerificationsError>
  /** Resets an address's redemption limit for an offer; answers how many verifications no longer count. */
  resetLimit(viewer: Viewer, email: string, offerId: string): Effect.Effect<number, VerificationsError>
  jwks(): Effect.Effect<JSONWebKeySet>
  /** Retires the signing key now (old keys stay published until their tokens expire). */
  rotateSigningKey(): Effect.Effect<void>
  /** Runs the sweep now (the layer runs it on an interval): expiry, resends after a restart, reminders, retention. */
  readonly sweep: Effect.Effect<void>
}

/** A verified verification and its person, as `person` answers. */
export interface VerifiedPerson {
  readonly verification: VerificationView
  /** A keyed hash of the canonical address and the audience: the same person, the same audience, the same value. */
  readonly subject: string
  /** The verified address (normalised), when the sealed address given was it. */
  readonly email: string | undefined
}

export interface VerificationsOptions {
  /** The deployment's verification secret (`verification/secrets.ts`). */
  readonly secret: string
  /** The secret that signs webhooks (`webhooks/secret.ts`). */
  readonly webhookSecret: string
  /** The public address links start with (no trailing slash). */
  readonly publicUrl: () => string
  /** Webhook retry tuning (tests). */
  readonly webhookDelivery?: DeliveryOptions | undefined
}

export class Verifications extends Context.Service<Verifications, VerificationsService>()(
  "campusgate/verification/Verifications"
) {
  /**
   * The service over its stores and transport; forks the send queue's
   * workers and the sweep (at start: pending sends resume) in the layer's scope.
   */
  static readonly layer = (
    options: VerificationsOptions
  ): Layer.Layer<
    Verifications,
    never,
    Snapshot | Validation | VerificationStore | SigningKeyStore | MailTransport | UsageStatistics
  > =>
    Layer.effect(
      Verifications,
      Effect.flatMap(layerServices, (services) => makeVerifications(options, services))
    )
}

/** The services the layer builds on. */
interface LayerServices {
  readonly snapshots: Snapshot["Service"]
  readonly validation: Validation["Service"]
  readonly store: VerificationStore["Service"]
  readonly usage: UsageStatistics["Service"]
  readonly signingKeys: SigningKeyStore["Service"]
  readonly transport: MailTransport["Service"]
}

const layerServices = Effect.all({
  snapshots: Effect.service(Snapshot),
  validation: Effect.service(Validation),
  store: Effect.service(VerificationStore),
  usage: Effect.service(UsageStatistics),
  signingKeys: Effect.service(SigningKeyStore),
  transport: Effect.service(MailTransport)
})

/** What the service's operations share: the confirmations' dependencies (`verificationConfirm.ts`) and `Validation`. */
interface Dependencies extends ConfirmDependencies {
  readonly validation: Validation["Service"]
}

/** The record if the viewer may see it; a pending one past its lifetime is expired first. */
const visibleRecord = Effect.fnUntraced(function* (
  dependencies: Omit<ConfirmDependencies, "visible">,
  viewer: Viewer,
  id: string,
  held: boolean
) {
  const { store, records, count, notifies, work } = dependencies
  const record = yield* store.get(id)
  if (record === undefined || !verificationVisible(record, viewer)) {
    return yield* refuse(new VerificationNotFound({ id }))
  }
  const now = yield* Clock.currentTimeMillis
  if (!isDue(record, now)) return record
  const expired = yield* records
    .modify(id, (current) => (isDue(current, now) ? expire(current, notifies(current)) : undefined), held)
    .pipe(Effect.catchTag("VerificationStoreError", () => Effect.succeed(record)))
  if (expired?.status === "expired" && record.status === "pending") {
    count(expired, "expired")
    yield* work.notify(expired)
  }
  return expired ?? record
})

const start = Effect.fn("Verifications.start")(function* (
  dependencies: Dependencies,
  viewer: Viewer,
  request: StartVerification
) {
  const { snapshots, validation, store, keys, work, count } = dependencies
  if ((request.offerId === undefined) === (request.targetGroupId === undefined)) {
    return yield* invalid("/offerId", "EXACTLY_ONE", "give exactly one of offerId and targetGroupId")
  }
  const snapshot = snapshots.current()
  const answer =
    request.offerId !== undefined
      ? validation.offer(viewer, request.email, request.offerId)
      : validation.targetGroup(viewer, request.email, request.targetGroupId!)
  if (answer instanceof ValidationError) return yield* refuse(answer.reason)
  if (!answer.isValid) return { ineligible: answer }
  const policy = policyOf(snapshot, request)
  const method = yield* methodOf(request, policy)
  const normalized = normalizedOf(answer)
  if (normalized === undefined) return { ineligible: answer }
  if (work.queue.size >= snapshot.config.settings.verification.mail.maxQueued) {
    return yield* unavailable(
      "Too many messages are waiting to be sent; nothing was accepted. Try again later.",
      "queueFull"
    )
  }
  const now = yield* Clock.currentTimeMillis
  const addressHash = keys.addressHash(canonicalOf(normalized))
  const id = newVerificationId()
  const secret = method === "code" ? newCode(policy.codeLength) : newLinkSecret()
  const sealedAddress = keys.seal(normalized)
  const record = pendingRecord({
    id,
    request,
    answer,
    viewer,
    snapshot,
    policy,
    method,
    normalized,
    addressHash,
    secretHash: keys.secretHash(id, secret),
    sealedAddress,
    claim: work.claimFor(now),
    now
  })
  const redeemed = alreadyRedeemed(yield* store.byAddress(addressHash), record, policy, now)
  if (redeemed !== undefined) return yield* refuse(redeemed)
  // The message limits are decided with the write: of concurrent starts, only as many as they allow are stored.
  const cap = mailboxCapOf(snapshot)
  yield* store.insert(record, messageLimits(record, policy, cap, now)).pipe(
    Effect.catchTags({
      LimitExceeded: (exceeded) => refuse(limitRefusal(exceeded, record, policy, cap, now)),
      VerificationStoreError: (error) =>
        unavailable(`The verification could not be stored (${error.message}); nothing was accepted. Try again later.`)
    })
  )
  // Stored as queued: if the queue is full now, the sweep queues it.
  work.send({ id, secret })
  count(record, "started")
  return { started: toView(record), sealedAddress }
})

const person = Effect.fn("Verifications.person")(function* (
  dependencies: Dependencies,
  viewer: Viewer,
  id: string,
  audience: string,
  sealedAddress: string | undefined
) {
  const record = yield* dependencies.visible(viewer, id, false)
  const { keys } = dependencies
  const address = sealedAddress === undefined ? undefined : keys.unseal(sealedAddress)
  const email =
    address !== undefined && keys.addressHash(canonicalOf(address)) === record.addressHash ? address : undefined
  return {
    verification: toView(record),
    subject: keys.subject(`audience:${audience}`, record.addressHash),
    email
  } satisfies VerifiedPerson
})

const resend = Effect.fn("Verifications.resend")(function* (
  dependencies: Dependencies,
  settleWithin: Confirmations["settleWithin"],
  viewer: Viewer,
  id: string
) {
  const { snapshots, records, keys, work, visible } = dependencies
  return yield* records.locked(
    id,
    Effect.gen(function* () {
      const record = yield* visible(viewer, id, true)
      if (record.status !== "pending") return toView(yield* notPending(record))
      const now = yield* Clock.currentTimeMillis
      if (now < record.resendAvailableAt) {
        return yield* refuse(new ResendTooSoon({ retryAfterSeconds: seconds(record.resendAvailableAt - now) }))
      }
      const snapshot = snapshots.current()
      const policy = policyOf(snapshot, record)
      if (work.queue.size >= snapshot.config.settings.verification.mail.maxQueued) {
        return yield* unavailable("Too many messages are waiting to be sent. Try again later.", "queueFull")
      }
      const secret = record.method === "code" ? newCode(policy.codeLength) : newLinkSecret()
      const next = renew(
        record,
        keys.secretHash(id, secret),
        now,
        policy.lifetimeMs,
        policy.resendAfterMs,
        work.claimFor(now)
      )
      const cap = mailboxCapOf(snapshot)
      const stored = yield* settleWithin(next, messageLimits(next, policy, cap, now)).pipe(
        Effect.catchTag("LimitExceeded", (exceeded) => refuse(limitRefusal(exceeded, next, policy, cap, now)))
      )
      work.send({ id, secret })
      return toView(stored)
    })
  )
})

const cancelOne = Effect.fn("Verifications.cancel")(function* (
  dependencies: Dependencies,
  settle: Confirmations["settle"],
  viewer: Viewer,
  id: string
) {
  const { records, visible } = dependencies
  return yield* records.locked(
    id,
    Effect.gen(function* () {
      const record = yield* visible(viewer, id, true)
      if (record.status === "cancelled") return toView(record)
      if (record.status !== "pending") return toView(yield* notPending(record))
      return toView(yield* settle(cancel(record, yield* Clock.currentTimeMillis)))
    })
  )
})

type Confirmations = ReturnType<typeof makeConfirmations>

/** The service over `services`, its work forked in the layer's scope. */
const makeVerifications = Effect.fnUntraced(function* (options: VerificationsOptions, services: LayerServices) {
  const { snapshots, validation, store, usage } = services
  const keys = verificationKeys(options.secret)
  const records = makeRecords(store)
  const tokens = makeTokens(services.signingKeys, snapshots, keys)
  const work = yield* makeWork({
    store,
    records,
    snapshots,
    keys,
    transport: services.transport,
    usage,
    tokens,
    webhookSecret: options.webhookSecret,
    publicUrl: options.publicUrl,
    webhookDelivery: options.webhookDelivery
  })
  const shared = {
    store,
    records,
    keys,
    snapshots,
    tokens,
    work,
    count: (record: VerificationRecord, event: "started" | "verified" | "failed" | "expired") => {
      if (record.offerId !== undefined) usage.recordVerification(record.offerId, event)
    },
    notifies: (record: VerificationRecord) => policyOf(snapshots.current(), record).webhookUrl !== undefined
  }
  const dependencies: Dependencies = {
    ...shared,
    validation,
    visible: (viewer, id, held) => visibleRecord(shared, viewer, id, held)
  }
  const { settle, settleWithin, confirm, confirmLink } = makeConfirmations(dependencies)
  const { lookup, resetLimit } = makeLookups({ store, records, keys, snapshots })

  yield* tokens
    .rotateIfDue()
    .pipe(Effect.catchCause((cause) => Effect.logError("signing key could not be made", { cause })))
  yield* work.sweep
  const interval = Duration.millis(periodMillis(snapshots.current().config.settings.verification.sweepInterval))
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(interval), work.sweep)))

  return Verifications.of({
    start: (viewer, request) => start(dependencies, viewer, request),
    get: (viewer, id) => Effect.map(dependencies.visible(viewer, id, false), toView),
    confirm,
    confirmLink,
    resend: (viewer, id) => resend(dependencies, settleWithin, viewer, id),
    cancel: (viewer, id) => cancelOne(dependencies, settle, viewer, id),
    lookup,
    person: (viewer, id, audience, sealedAddress) => person(dependencies, viewer, id, audience, sealedAddress),
    resetLimit,
    jwks: () => tokens.jwks().pipe(Effect.orDie),
    rotateSigningKey: () => tokens.rotateIfDue(true).pipe(Effect.orDie),
    sweep: work.sweep
  })
})
