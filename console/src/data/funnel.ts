/**
 * The verification funnel of an offer: started → sent → verified, each step
 * with its share of the verifications started. Shown once verifications
 * exist (`undefined` before the first start), because a funnel of zeros
 * says nothing an empty page does not.
 */

export interface FunnelCounts {
  readonly started: number
  readonly sent: number
  readonly verified: number
}

export interface FunnelStep {
  readonly step: keyof FunnelCounts
  readonly label: string
  readonly count: number
  /** count / started, 0..1 (a step can exceed its predecessor only through bad data: capped at 1). */
  readonly ofStarted: number
}

const LABELS: Record<keyof FunnelCounts, string> = {
  started: "Started",
  sent: "Message sent",
  verified: "Verified"
}

export const funnelOf = (counts: FunnelCounts): ReadonlyArray<FunnelStep> | undefined => {
  if (counts.started <= 0) return undefined
  return (["started", "sent", "verified"] as const).map((step) => ({
    step,
    label: LABELS[step],
    count: counts[step],
    ofStarted: Math.min(1, counts[step] / counts.started)
  }))
}
