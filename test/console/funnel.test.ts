/** The funnels: verifications (started → sent → verified) and the hosted page's flows, as shares of their starts, shown once they exist. */
import { describe, expect, it } from "vitest"
import { funnelOf, hostedFunnelOf } from "../../console/src/data/funnel.ts"

describe("the verification funnel", () => {
  it("is absent before the first verification", () => {
    expect(funnelOf({ started: 0, sent: 0, verified: 0 })).toBeUndefined()
  })

  it("gives each step its count and its share of the verifications started", () => {
    expect(funnelOf({ started: 8, sent: 6, verified: 2 })).toEqual([
      { step: "started", label: "Started", count: 8, ofStarted: 1 },
      { step: "sent", label: "Message sent", count: 6, ofStarted: 0.75 },
      { step: "verified", label: "Verified", count: 2, ofStarted: 0.25 }
    ])
  })

  it("caps a share at the whole", () => {
    expect(funnelOf({ started: 2, sent: 3, verified: 1 })?.[1]?.ofStarted).toBe(1)
  })
})

describe("the hosted page's funnel", () => {
  const counts = {
    started: 10,
    reachedCodeStep: 6,
    completed: 4,
    ineligibleSubmissions: 3,
    abandonedAtEmailStep: 4,
    abandonedAtCodeStep: 2
  }

  it("is absent before the first flow, and for statistics from before it was counted", () => {
    expect(hostedFunnelOf({ ...counts, started: 0 })).toBeUndefined()
    expect(hostedFunnelOf(undefined)).toBeUndefined()
  })

  it("gives started → code step → completed as shares of the flows started, and where flows stopped", () => {
    expect(hostedFunnelOf(counts)).toEqual({
      steps: [
        { step: "started", label: "Flows started", count: 10, ofStarted: 1 },
        { step: "reachedCodeStep", label: "Reached the code step", count: 6, ofStarted: 0.6 },
        { step: "completed", label: "Completed", count: 4, ofStarted: 0.4 }
      ],
      stopped: [
        { step: "abandonedAtEmailStep", label: "Left at the email step", count: 4, ofStarted: 0.4 },
        { step: "abandonedAtCodeStep", label: "Left at the code step", count: 2, ofStarted: 0.2 },
        // Submissions, not flows: no share of the flows.
        { step: "ineligibleSubmissions", label: "Ineligible addresses entered", count: 3, ofStarted: undefined }
      ]
    })
  })
})
