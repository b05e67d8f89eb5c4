/** The verification funnel: started → sent → verified as shares of started, shown once verifications exist. */
import { describe, expect, it } from "vitest"
import { funnelOf } from "../../console/src/data/funnel.ts"

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
