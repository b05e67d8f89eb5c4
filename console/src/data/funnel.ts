/**
 * The funnels of an offer, each step with its share of the first: its
 * verifications (started → sent → verified), and its hosted page's flows
 * (started → reached the code step → completed, with the flows that
 * stopped at each step). Each is shown once it has a start (`undefined`
 * before), because a funnel of zeros says nothing an empty page does not.
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

/** The hosted page's counts as the offer's status gives them (`usage.hostedFlow`). */
export interface HostedFlowCounts {
  readonly started: number
  readonly reachedCodeStep: number
  readonly completed: number
  readonly ineligibleSubmissions: number
  readonly abandonedAtEmailStep: number
  readonly abandonedAtCodeStep: number
}

export interface HostedFunnelStep {
  readonly step: "started" | "reachedCodeStep" | "completed"
  readonly label: string
  readonly count: number
  /** count / started, 0..1 (capped, as above). */
  readonly ofStarted: number
}

export interface HostedFunnel {
  readonly steps: ReadonlyArray<HostedFunnelStep>
  /** Where flows stopped, each with its share of the flows started; ineligible addresses (submissions, not flows) without one. */
  readonly stopped: ReadonlyArray<{
    readonly step: "abandonedAtEmailStep" | "abandonedAtCodeStep" | "ineligibleSubmissions"
    readonly label: string
    readonly count: number
    readonly ofStarted: number | undefined
  }>
}

const HOSTED_LABELS = {
  started: "Flows started",
  reachedCodeStep: "Reached the code step",
  completed: "Completed",
  abandonedAtEmailStep: "Left at the email step",
  abandonedAtCodeStep: "Left at the code step",
  ineligibleSubmissions: "Ineligible addresses entered"
} as const

export const hostedFunnelOf = (counts: HostedFlowCounts | undefined): HostedFunnel | undefined => {
  if (counts === undefined || counts.started <= 0) return undefined
  const share = (count: number) => Math.min(1, count / counts.started)
  return {
    steps: (["started", "reachedCodeStep", "completed"] as const).map((step) => ({
      step,
      label: HOSTED_LABELS[step],
      count: counts[step],
      ofStarted: share(counts[step])
    })),
    stopped: (["abandonedAtEmailStep", "abandonedAtCodeStep", "ineligibleSubmissions"] as const).map((step) => ({
      step,
      label: HOSTED_LABELS[step],
      count: counts[step],
      ofStarted: step === "ineligibleSubmissions" ? undefined : share(counts[step])
    }))
  }
}
