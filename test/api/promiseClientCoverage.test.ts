import { describe, expect, it } from "vitest"
import { CampusgateApi } from "../../src/api/Api.ts"
import { createCampusgateClient } from "../../src/api/promiseClient.ts"

/** Endpoints whose Promise client method is named otherwise: `status.get` is `status()`. */
const renamed: Readonly<Record<string, (client: Record<string, unknown>) => unknown>> = {
  "status.get": (client) => client.status
}

describe("the Promise client", () => {
  it("has a method for every endpoint of the contract, in the contract's group and name", () => {
    const client = createCampusgateClient({ baseUrl: "http://127.0.0.1:9", apiKey: "cg_test" }) as unknown as Record<
      string,
      unknown
    >
    const missing: Array<string> = []
    const groups = (CampusgateApi as unknown as { groups: Record<string, { endpoints: Record<string, unknown> }> })
      .groups
    for (const [group, { endpoints }] of Object.entries(groups)) {
      for (const endpoint of Object.keys(endpoints)) {
        const name = `${group}.${endpoint}`
        const method = renamed[name]?.(client) ?? (client[group] as Record<string, unknown> | undefined)?.[endpoint]
        if (typeof method !== "function") missing.push(name)
      }
    }
    expect(missing).toEqual([])
  })
})
