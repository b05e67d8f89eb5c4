/**
 * How fast the shared machine is at the moment: a fixed piece of work of the
 * kind a job does (strings built and hashed into a `Map`, looked up in a
 * scattered order, small objects written as JSON), run in a fresh process,
 * its milliseconds reported. The machine's speed moves by a factor of two
 * within an hour (the same probe took 0.9-2.0 s in one session), so
 * benchmarks whose figures are judged against a fixed goal report it beside
 * them (`bench:jobs:runs`). `node bench/machineSpeed.ts` prints the
 * milliseconds as one JSON line.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The work, timed: a checksum keeps it from being optimised away. */
const probe = (): { readonly ms: number; readonly checksum: number } => {
  const started = performance.now()
  const count = 100_000
  const hosts = new Map<string, number>()
  for (let i = 0; i < count; i++) hosts.set(`student.${i}@dept${i % 97}.university${i % 5000}.edu`, i)
  let checksum = 0
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < count; i++) {
      const j = (i * 7919) % count
      checksum += hosts.get(`student.${j}@dept${j % 97}.university${j % 5000}.edu`) ?? 0
    }
  }
  for (let i = 0; i < count; i++) checksum += JSON.stringify({ email: `x${i}@y.edu`, isValid: i % 3 === 0 }).length
  return { ms: performance.now() - started, checksum }
}

/** The probe's milliseconds in a fresh process, on the cores `cpus` (a `taskset -c` list) when given. */
export const machineProbeMs = (cpus?: string): number => {
  const command = [process.execPath, fileURLToPath(import.meta.url)]
  const done =
    cpus === undefined
      ? spawnSync(command[0]!, command.slice(1), { encoding: "utf8" })
      : spawnSync("taskset", ["-c", cpus, ...command], { encoding: "utf8" })
  if (done.status !== 0) throw new Error(`the machine probe failed (${done.status}): ${done.stderr}`)
  return Math.round((JSON.parse(done.stdout.trim()) as { ms: number }).ms)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify({ ms: probe().ms }))
