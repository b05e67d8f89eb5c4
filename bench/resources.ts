/**
 * Creating resources through the API as a deployment grows: `N` target
 * groups (default 400) and an offer using each are created one by one on
 * the built daemon, and the time of each create is measured, so a cost
 * that grows with what already exists shows as a slope between the first
 * and the last creates. While the creates run, `/healthz` is asked in a
 * loop: its slowest answer is how long a create holds every other tenant.
 *
 * Final line: JSON with the median create time of the first and last 50 of
 * each kind, their ratio (1 = independent of size), and the slowest /healthz.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { prepareConfig, startDaemon } from "./daemonProcess.ts"

const N = Number(process.env.BENCH_RESOURCES ?? 400)
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-resources-"))
const config = prepareConfig(root, ["target-groups:write", "offers:write"], [[["limits", "resourcesPerTeam"], 2 * N]])
const daemon = await startDaemon(config, join(root, "daemon.log"), process.env.BENCH_NODE_ARGS?.split(" ") ?? [])

const post = async (path: string, body: unknown): Promise<number> => {
  const started = performance.now()
  const response = await fetch(`${daemon.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${config.key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== 201) throw new Error(`${path} answered ${response.status}: ${text}`)
  return performance.now() - started
}

let slowestHealth = 0
let creating = true
const probe = (async () => {
  while (creating) {
    const started = performance.now()
    await (await fetch(`${daemon.url}/healthz`)).text()
    slowestHealth = Math.max(slowestHealth, performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
})()

const groups: Array<number> = []
const offers: Array<number> = []
try {
  for (let i = 0; i < N; i++) {
    const id = `bench-group-${i}`
    groups.push(
      await post("/api/v1/target-groups", {
        id,
        name: `Bench group ${i}`,
        criteria: {
          institutions: { types: ["university"], countries: ["GB", "DE"] },
          domains: { allow: [`x${i}.example`] }
        }
      })
    )
    offers.push(
      await post("/api/v1/offers", { id: `bench-offer-${i}`, name: `Offer ${i}`, targetGroups: [id], status: "active" })
    )
  }
} finally {
  creating = false
  await probe
  daemon.child.kill("SIGTERM")
  await daemon.exited
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
const round = (value: number) => Math.round(value * 100) / 100
const figures = (times: ReadonlyArray<number>) => {
  const first = median(times.slice(0, 50))
  const last = median(times.slice(-50))
  return { firstMs: round(first), lastMs: round(last), lastOverFirst: round(last / first) }
}
const result = {
  resources: N,
  createTargetGroup: figures(groups),
  createOffer: figures(offers),
  slowestHealthzMs: round(slowestHealth)
}
console.log(
  `target groups: first 50 ${result.createTargetGroup.firstMs} ms, last 50 ${result.createTargetGroup.lastMs} ms`
)
console.log(`offers:        first 50 ${result.createOffer.firstMs} ms, last 50 ${result.createOffer.lastMs} ms`)
console.log(`slowest /healthz during the creates: ${result.slowestHealthzMs} ms`)
console.log(JSON.stringify(result))
