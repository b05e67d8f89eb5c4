/**
 * An offer's status as transports answer it: where its lifecycle and its
 * window put it now (`domain/offerLifecycle.ts`), and its usage statistics
 * (`stats/UsageStatistics.ts`), the last `days` days as a dense daily
 * series when asked (`domain/OfferUsage.ts` `lastDays`). The offer handlers
 * call it rather than the statistics themselves; a read of the statistics
 * that fails is the caller's to answer.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ConfigSnapshot } from "../app/Snapshot.ts"
import type { EffectiveOfferStatus, Offer } from "../domain/Offer.ts"
import { lastDays, type OfferUsage } from "../domain/OfferUsage.ts"
import { offerStatusAt } from "../domain/offerLifecycle.ts"
import { UsageStatistics } from "./UsageStatistics.ts"
import type { UsageStoreError } from "./UsageStore.ts"

export interface OfferStatusView {
  readonly id: string
  readonly status: EffectiveOfferStatus
  readonly statusReason: string
  readonly window: { readonly startsAt: string | null; readonly endsAt: string | null }
  readonly usage: OfferUsage
}

export interface OfferStatusService {
  /** `offer` of `snapshot` now, with its usage; `days`: its daily usage cut to the last `days` days. */
  status(
    snapshot: ConfigSnapshot,
    offer: Offer,
    days: number | undefined
  ): Effect.Effect<OfferStatusView, UsageStoreError>
}

/** The service over the usage statistics. */
export const makeOfferStatus = (statistics: Pick<UsageStatistics["Service"], "usage">): OfferStatusService => ({
  status: (snapshot, offer, days) =>
    Effect.suspend(() => {
      const { status, reason } = offerStatusAt(offer, snapshot.engine.now())
      return Effect.map(statistics.usage(offer.id), (usage) => ({
        id: offer.id,
        status,
        statusReason: reason,
        window: { startsAt: offer.startsAt ?? null, endsAt: offer.endsAt ?? null },
        usage: days === undefined ? usage : { ...usage, daily: lastDays(usage.daily, days, snapshot.engine.now()) }
      }))
    })
})

export class OfferStatus extends Context.Service<OfferStatus, OfferStatusService>()("campusgate/stats/OfferStatus") {
  static readonly layer: Layer.Layer<OfferStatus, never, UsageStatistics> = Layer.effect(
    OfferStatus,
    Effect.map(Effect.service(UsageStatistics), makeOfferStatus)
  )
}
