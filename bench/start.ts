/**
 * `npm run bench:start` (`-- --quick` or BENCH_QUICK=1 for a short check):
 * the daemon's start-up, `campusgate serve` on a copy of the shipped config
 * spawned until `GET /healthz` answers 200 (`bench/serveStart.ts`), pinned
 * to one core where the machine has two. With BENCH_BEFORE_TREE=DIR
 * (another checkout, built) its daemon starts too, on its own shipped
 * config, alternating with this one's round by round (the first of each
 * pair taking turns), so both see the same stretch of the shared machine.
 *
 * Reported per checkout: the median, min and max time to `/healthz` and
 * CPU time the daemon had used by then (all its threads; what a loaded
 * machine disturbs least), the first start apart (its data directory new:
 * caches kept there are cold), and the median of each phase from the
 * daemon's log: the `sinceStartMs` of each step line, which every version
 * writes, and the durations of the `start phases` line, where it writes
 * one; with a before tree, the ratios after / before per round.
 * Environment: BENCH_ROUNDS (default 11, 3 quick).
 * Progress goes to standard error; the final line on standard output is JSON.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { beforeTree, prepareConfig } from "./daemonProcess.ts"
import { quick, ratios, spread } from "./rounds.ts"
import { type ServeStart, serveStart } from "./serveStart.ts"
import { chooseCores } from "./wrkLoad.ts"

const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 3 : 11))
const cores = chooseCores()
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-start-"))

interface Side {
  readonly name: "after" | "before"
  readonly tree: string | undefined
  readonly dirs: { readonly configDir: string; readonly dataDir: string }
  readonly starts: Array<ServeStart>
  first?: ServeStart
}

const sides: Array<Side> = [undefined, beforeTree]
  .filter((tree, i) => i === 0 || tree !== undefined)
  .map((tree, i) => {
    const name = i === 0 ? "after" : "before"
    return { name, tree, dirs: prepareConfig(join(root, name), ["validate:target-groups"], [], tree), starts: [] }
  })

/** What one start's log says of its phases: each step line's `sinceStartMs`, and the `start phases` line's durations. */
const phasesOf = (log: string): Record<string, number> => {
  const phases: Record<string, number> = {}
  for (const text of log.split("\n")) {
    if (!text.startsWith("{")) continue
    const line = JSON.parse(text) as Record<string, unknown>
    if (line.msg === "start phases") {
      for (const [name, value] of Object.entries(line)) if (typeof value === "number") phases[name] = value
    } else if (typeof line.sinceStartMs === "number") {
      phases[`at: ${line.msg}`] = line.sinceStartMs
    }
  }
  return phases
}

const medianPhases = (starts: ReadonlyArray<ServeStart>): Record<string, number> => {
  const all = starts.map((start) => phasesOf(start.log))
  const names = [...new Set(all.flatMap((phases) => Object.keys(phases)))]
  return Object.fromEntries(
    names.map((name) => [
      name,
      spread(
        all.flatMap((phases) => phases[name] ?? []),
        1
      ).median
    ])
  )
}

const start = async (side: Side): Promise<ServeStart> => serveStart(side.dirs, root, cores?.server, side.tree)

console.error(
  `node ${process.version}, ${availableParallelism()} CPUs; daemon ${cores === undefined ? "not pinned" : `on CPU ${cores.server}`}; ` +
    `${rounds} rounds of ${sides.map((side) => side.name).join(" and ")}; working in ${root}`
)
try {
  for (const side of sides) {
    side.first = await start(side)
    console.error(`${side.name} first start: ${Math.round(side.first.ms)} ms`)
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) {
      const result = await start(side)
      side.starts.push(result)
      console.error(`round ${round + 1} ${side.name}: ${Math.round(result.ms)} ms, CPU ${result.cpuMs ?? "?"} ms`)
    }
  }
  const summary = (side: Side) => ({
    tree: side.tree ?? "this checkout",
    healthzMs: spread(
      side.starts.map((s) => s.ms),
      0
    ),
    cpuMs: spread(
      side.starts.flatMap((s) => s.cpuMs ?? []),
      0
    ),
    firstMs: Math.round(side.first!.ms),
    phasesMedianMs: medianPhases(side.starts)
  })
  const [after, before] = sides
  const result = {
    bench: "start",
    node: process.version,
    rounds,
    pinned: cores?.server ?? null,
    after: summary(after!),
    ...(before === undefined
      ? {}
      : {
          before: summary(before),
          afterOverBefore: {
            healthz: spread(
              ratios(
                after!.starts.map((s) => s.ms),
                before.starts.map((s) => s.ms)
              )
            ),
            cpu: spread(
              ratios(
                after!.starts.map((s) => s.cpuMs ?? Number.NaN),
                before.starts.map((s) => s.cpuMs ?? Number.NaN)
              )
            )
          }
        })
  }
  console.log(JSON.stringify(result))
} finally {
  rmSync(root, { recursive: true, force: true })
}
