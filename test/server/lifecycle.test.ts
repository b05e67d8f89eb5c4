import { describe, expect, it } from "vitest"
import { call, copyConfig, startDaemon } from "./daemon.ts"

describe("daemon lifecycle", () => {
  it("creates and prints one bootstrap key on a first start without keys, and it works", async () => {
    const dirs = copyConfig()
    const daemon = await startDaemon(dirs)
    try {
      const created = daemon.lines.find((line) => line.msg === "created the first API key; it is shown only this once")
      expect(created).toMatchObject({ team: "acme", key: expect.stringMatching(/^cgk_/) })
      const result = await call(daemon, "POST", "/api/v1/validate/target-group", {
        key: String(created!.key),
        body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
      })
      expect(result.status).toBe(200)
      // The key is in the first snapshot: no reload for it, then or once the watcher has had time to see its file.
      await new Promise((resolve) => setTimeout(resolve, 600))
      const status = await call(daemon, "GET", "/api/v1/status", { key: String(created!.key) })
      expect(status.body.config).toMatchObject({ generation: 1 })
      expect(daemon.lines.map((line) => line.msg)).not.toContain("config reloaded")
      expect(daemon.lines.find((line) => line.msg === "starting")).toMatchObject({ generation: 1 })
    } finally {
      expect(await daemon.stop()).toBe(0)
    }
    // A second start finds the stored key and creates none.
    const again = await startDaemon(dirs)
    expect(again.lines.some((line) => String(line.msg).startsWith("created the first API key"))).toBe(false)
    await again.stop()
  }, 60_000)

  it("finishes in-flight requests on SIGTERM and exits 0", async () => {
    const dirs = copyConfig()
    const daemon = await startDaemon(dirs)
    const key = String(daemon.lines.find((line) => typeof line.key === "string")!.key)
    const emails = Array.from({ length: 1000 }, (_, i) => `student${i}@ox.ac.uk`)
    const inFlight = Array.from({ length: 5 }, () =>
      call(daemon, "POST", "/api/v1/validate/bulk", { key, body: { emails, targetGroupId: "uk-students" } })
    )
    await new Promise((resolve) => setTimeout(resolve, 5))
    const exit = daemon.stop("SIGTERM")
    const answers = await Promise.allSettled(inFlight)
    // Every request that reached the server before the signal is answered in full.
    for (const answer of answers) {
      if (answer.status === "fulfilled") expect(answer.value.status).toBe(200)
    }
    expect(answers.some((answer) => answer.status === "fulfilled")).toBe(true)
    expect(await exit).toBe(0)
  }, 60_000)

  it("refuses to start on an invalid config, with every problem, and exits non-zero", async () => {
    const dirs = copyConfig()
    const { writeFileSync } = await import("node:fs")
    writeFileSync(`${dirs.configDir}/offers/broken.yaml`, "id: broken\nteam: acme\n")
    await expect(startDaemon(dirs)).rejects.toThrow(/offers\/broken\.yaml/)
  }, 60_000)
})
