/**
 * What the real daemon writes to its log: no API key, raw path or full
 * address ever, whatever a client puts in the path.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { call, copyConfig, type Daemon, makeKey, startDaemon, waitForLine } from "./daemon.ts"

let daemon: Daemon
let key: string

beforeAll(async () => {
  const dirs = copyConfig()
  key = makeKey(dirs, "acme", allScopes)
  daemon = await startDaemon(dirs)
}, 30_000)

afterAll(async () => {
  await daemon?.stop()
})

describe("request log lines", () => {
  it("hold the route template, never an API key or an address written in the path", async () => {
    const address = "leaky.person@ox.ac.uk"
    const sent = [
      [`/api/v1/offers/${key}/status`, "leak-key"],
      [`/v1/offers/${key}/status?x=${key}`, "leak-key-alias"],
      [`/api/v1/offers/${address}`, "leak-email"],
      [`/api/v1/target-groups/${encodeURIComponent(address)}`, "leak-email-encoded"],
      [`/nowhere/${address}/${key}`, "leak-unmatched"]
    ] as const
    for (const [path, requestId] of sent) {
      const answer = await call(daemon, "GET", path, { key, headers: { "x-request-id": requestId } })
      expect(answer.status).toBe(404)
    }
    const logged = await Promise.all(
      sent.map(([, requestId]) => waitForLine(daemon, (line) => line.requestId === requestId))
    )
    expect(logged.map((line) => line.path)).toEqual([
      "/api/v1/offers/{id}/status",
      "/api/v1/offers/{id}/status",
      "/api/v1/offers/{id}",
      "/api/v1/target-groups/{id}",
      "unmatched"
    ])
    const all = JSON.stringify(daemon.lines)
    expect(all).not.toContain(key)
    expect(all).not.toContain(key.slice(4))
    expect(all).not.toContain("leaky.person")
    expect(all).not.toContain(encodeURIComponent(address))
  })
})
