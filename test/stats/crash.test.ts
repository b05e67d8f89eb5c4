import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { readUsageFiles } from "../../src/stats/usageFiles.ts"

const flushIntervalMs = 200

describe("usage statistics after a crash (SIGKILL)", () => {
  it("keep whole files and lose at most one flush interval of validations", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "campusgate-stats-crash-"))
    const child = spawn(process.execPath, [
      fileURLToPath(new URL("crashRecorder.ts", import.meta.url)),
      dataDir,
      String(flushIntervalMs)
    ])
    const reports: Array<{ recorded: number; at: number }> = []
    let buffered = ""
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8")
      const lines = buffered.split("\n")
      buffered = lines.pop()!
      for (const line of lines) {
        const [recorded, at] = line.split(" ").map(Number)
        if (line !== "ready") reports.push({ recorded: recorded!, at: at! })
      }
    })
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()))
    await new Promise((resolve) => setTimeout(resolve, 5 * flushIntervalMs + 137))
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))

    const states = readUsageFiles(dataDir)
    const state = states.get("o")!.state
    const last = reports.at(-1)!
    // Whole files: the counters agree with each other and with the daily buckets.
    expect(state.validations).toBe(state.eligible + state.ineligible)
    expect(state.ineligible * 5).toBe(state.validations)
    expect([...state.daily.values()].reduce((sum, day) => sum + day.validations, 0)).toBe(state.validations)
    expect(readdirSync(join(dataDir, "stats")).filter((name) => name.endsWith(".json"))).toEqual(["o.json"])
    // Nothing counted that was not recorded; everything recorded an interval (plus scheduling slack) before the end is stored.
    expect(state.validations).toBeLessThanOrEqual(last.recorded)
    const slackMs = 250
    const bound = reports.filter((report) => report.at <= last.at - flushIntervalMs - slackMs).at(-1)!
    expect(state.validations).toBeGreaterThanOrEqual(bound.recorded)
    const lost = last.recorded - state.validations
    const lostMs = last.at - (reports.find((report) => report.recorded > state.validations)?.at ?? last.at)
    console.info(
      `crash test: ${last.recorded} recorded, ${state.validations} stored, ${lost} lost (the last ${lostMs} ms; interval ${flushIntervalMs} ms)`
    )
  })
})
