/**
 * The hosted verification page's funnel as the page records it: a flow of
 * an offer opened, its address taken (a verification started), its code
 * confirmed, an address refused as ineligible. The counts go into the
 * offer's usage statistics (`UsageStatistics.recordHostedFlow`: memory
 * until the next flush, so a step costs no I/O on the page's request) and
 * come out in the offer's status (`domain/OfferUsage.ts`
 * `HostedFlowUsage`). The page calls this service rather than the
 * statistics themselves; a flow without an offer (by target group) is not
 * an offer's and counts nowhere.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { HostedFlowStep } from "../domain/OfferUsage.ts"
import { UsageStatistics } from "./UsageStatistics.ts"

export class HostedFunnel extends Context.Service<
  HostedFunnel,
  {
    /** Counts one step of a flow of `offerId`; nothing for a flow without an offer. Synchronous, never fails. */
    record(offerId: string | undefined, step: HostedFlowStep): void
  }
>()("campusgate/stats/HostedFunnel") {
  static readonly layer: Layer.Layer<HostedFunnel, never, UsageStatistics> = Layer.effect(
    HostedFunnel,
    Effect.map(Effect.service(UsageStatistics), (statistics) =>
      HostedFunnel.of({
        record: (offerId, step) => {
          if (offerId !== undefined) statistics.recordHostedFlow(offerId, step)
        }
      })
    )
  )
}
