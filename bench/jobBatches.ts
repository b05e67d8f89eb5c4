/**
 * `npm run bench:jobs:batches`: a job thread's work alone, in process: the
 * batches of a 1M-email job (bench/generateEmails.ts, 2,048 items each, as
 * `JobRunner` cuts them) decoded, evaluated by the job thread's
 * `Validation.rowVerdicts` and encoded (`encodeBatch`, into reused shared memory
 * as a batch slot is), against the shipped config's target group
 * `universities` and an offer of three target groups (as bench:jobs),
 * offer usage counted in a tally. Passes in the order target group, offer,
 * target group, offer (or BENCH_PASSES, e.g. `offer,targetGroup,offer`:
 * the offer's cold pass first, as a daemon's first job): the first of each
 * target is cold (every host judged in full, and the first pass builds
 * what the engine makes on first use, such as the candidate scorer), the
 * second warm. No HTTP, no files, no other thread: what the job thread's
 * CPU does per job (bench:jobs measures the daemon). Each pass is timed in
 * the child's CPU seconds (steady on a loaded machine) and wall seconds,
 * and the engine's build before the passes in CPU seconds.
 *
 * Each round runs in a child process of its own, on one core where the
 * machine has `taskset`. With BENCH_BEFORE_TREE=DIR (another checkout, its
 * `node_modules` and built data in place) every round also runs that tree's
 * code on the same emails, the two alternating, so a change is compared in
 * separate processes under the same conditions, the pair's order
 * alternating from round to round. BENCH_ROUNDS (default 3),
 * BENCH_EMAILS. Progress goes to standard error; the final line on
 * standard output is JSON: CPU and wall seconds per pass, median and
 * spread over the rounds, and the ratios of CPU seconds to the before tree's.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { generateEmails } from "./generateEmails.ts"
import { quick, ratios, spread } from "./rounds.ts"

/**
 * The passes, in order: BENCH_PASSES (e.g. `offer,offer`: the offer's cold pass first, as a daemon's first job), else
 * target group, offer, target group, offer. A pass is named after its target, cold (its first) or warm.
 */
const PASSES: ReadonlyArray<"targetGroup" | "offer"> = (
  process.env.BENCH_PASSES ?? "targetGroup,offer,targetGroup,offer"
)
  .split(",")
  .map((pass) => {
    if (pass !== "targetGroup" && pass !== "offer") throw new Error(`BENCH_PASSES: ${pass} is not targetGroup or offer`)
    return pass
  })
const PASS_NAMES = PASSES.map((pass, i) => {
  const name = `${pass}${PASSES.indexOf(pass) === i ? "Cold" : "Warm"}`
  return PASSES.slice(0, i).filter((earlier) => earlier === pass).length > 1 ? `${name}${i + 1}` : name
})
const BATCH = 2048
const OFFER = "bench-three-groups"

/** In a child: the passes with the code of checkout `tree` over the emails in `emailsFile`; prints their seconds as JSON. */
const child = async (tree: string, emailsFile: string): Promise<void> => {
  const from = (path: string) => import(join(tree, path))
  const { loadConfig } = await from("src/config/loadConfig.ts")
  const { EngineBuilder } = await from("src/app/EngineBuilder.ts")
  const { Validation } = await from("src/app/Validation.ts")
  const { encodeBatch } = await from("src/jobs/jobBatches.ts")
  const { usageTally } = await from("src/stats/UsageRecorder.ts")
  const { hashKeyFromBytes } = await from("src/engine/email/canonicalHash.ts")
  const { ALL_TEAMS } = await from("src/domain/visibility.ts")
  const configDir = mkdtempSync(join(tmpdir(), "campusgate-bench-batches-"))
  try {
    cpSync(join(tree, "config"), configDir, { recursive: true })
    writeFileSync(
      join(configDir, "offers", `${OFFER}.yaml`),
      `id: ${OFFER}\nteam: acme\nname: Three target groups\ntargetGroups: [universities, uk-students, acme-bavaria]\nstatus: active\n`
    )
    const loaded = loadConfig({ configDir, dataDir: join(configDir, "data") })
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems))
    const at = Date.now()
    const buildStarted = process.cpuUsage()
    // As on a job thread: no target group's verdicts on institutions kept (`jobs/jobThreadMemory.ts`).
    const engine = new EngineBuilder({ now: () => at, rememberVerdicts: false }).engineFor(loaded.config)
    const counted = { validated: () => {}, validatedAll: () => {} }
    const validation = Validation.make(
      { current: () => ({ engine }) },
      { record: () => {}, recordMany: () => {} },
      counted
    )
    const evaluate = (target: unknown, emails: ReadonlyArray<string>, tally: unknown, read: unknown) =>
      validation.rowVerdicts(ALL_TEAMS, target, emails, tally, read)
    const key = hashKeyFromBytes(new Uint8Array(16).fill(7))
    const lines = readFileSync(emailsFile)
    // Whole lines, BATCH at a time (the last batch may hold fewer).
    const batches: Array<Uint8Array> = []
    let start = 0
    let items = 0
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] !== 10 || ++items < BATCH) continue
      batches.push(lines.subarray(start, i + 1))
      start = i + 1
      items = 0
    }
    if (start < lines.length) batches.push(lines.subarray(start))
    const memory = {
      text: Buffer.from(new SharedArrayBuffer(2 * 1024 * 1024)),
      splices: new Uint32Array(BATCH),
      hashes: new Float64Array(BATCH)
    }
    const cpuOf = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since)
      return (used.user + used.system) / 1e6
    }
    const buildCpuSeconds = cpuOf(buildStarted)
    const seconds: Array<number> = []
    const cpuSeconds: Array<number> = []
    let bytes = 0
    for (const pass of PASSES) {
      const target = pass === "offer" ? { offerId: OFFER } : { targetGroupId: "universities" }
      const started = performance.now()
      const cpuStarted = process.cpuUsage()
      for (const batch of batches) {
        const tally = pass === "offer" ? usageTally(key, OFFER) : undefined
        // As a job thread of a daemon that counts usage: the duplicate hashes under the unique-email key.
        bytes += encodeBatch({ target, lines: batch, count: 0, columns: [] }, evaluate, tally, memory, key).text.length
        tally?.take()
      }
      seconds.push((performance.now() - started) / 1000)
      cpuSeconds.push(cpuOf(cpuStarted))
    }
    console.log(JSON.stringify({ seconds, cpuSeconds, buildCpuSeconds, bytes }))
  } finally {
    rmSync(configDir, { recursive: true, force: true })
  }
}

const here = fileURLToPath(import.meta.url)
const thisTree = fileURLToPath(new URL("..", import.meta.url))
const pinned = (() => {
  try {
    execFileSync("taskset", ["-c", "0", "true"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

interface Round {
  /** Wall-clock seconds per pass. */
  readonly seconds: Array<number>
  /** CPU seconds per pass (the child's one thread). */
  readonly cpuSeconds: Array<number>
  /** CPU seconds the engine's build took before the passes, as a job thread builds it on its start. */
  readonly buildCpuSeconds: number
}

/** One round of `tree` in a child process; its seconds per pass. */
const round = (tree: string, emailsFile: string): Round => {
  const command = [process.execPath, here, "--child", tree, emailsFile]
  const run = pinned
    ? spawnSync("taskset", ["-c", "0", ...command], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    : spawnSync(command[0]!, command.slice(1), { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  if (run.status !== 0) throw new Error(`the round of ${tree} failed (${run.status})`)
  const answered = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Partial<Round> & { seconds: Array<number> }
  // A tree whose child reports wall time alone: its CPU taken as its wall time.
  return {
    seconds: answered.seconds,
    cpuSeconds: answered.cpuSeconds ?? answered.seconds,
    buildCpuSeconds: answered.buildCpuSeconds ?? Number.NaN
  }
}

const main = () => {
  const emailCount = Number(process.env.BENCH_EMAILS ?? (quick ? 50_000 : 1_000_000))
  const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3))
  const beforeTree = process.env.BENCH_BEFORE_TREE || undefined
  const dir = mkdtempSync(join(tmpdir(), "campusgate-bench-batches-"))
  try {
    const emailsFile = join(dir, "emails.ndjson")
    const emails = generateEmails(buildInstitutionTable(), emailCount, 5)
    writeFileSync(emailsFile, `${emails.map((email) => JSON.stringify(email)).join("\n")}\n`)
    console.error(`${emailCount.toLocaleString()} emails, ${rounds} rounds, ${pinned ? "on core 0" : "not pinned"}`)
    const after: Array<Round> = []
    const before: Array<Round> = []
    const shown = (measured: Round) =>
      `CPU ${measured.cpuSeconds.map((s) => s.toFixed(2)).join(" / ")} s (wall ${measured.seconds.map((s) => s.toFixed(2)).join(" / ")} s), engine build ${measured.buildCpuSeconds.toFixed(2)} s CPU`
    for (let i = 0; i < rounds; i++) {
      // The pair's order alternates: the same code measured against itself ran 5-10% slower first in a fixed order.
      const beforeFirst = beforeTree !== undefined && i % 2 === 1
      if (beforeFirst) before.push(round(beforeTree, emailsFile))
      after.push(round(thisTree, emailsFile))
      if (beforeTree !== undefined && !beforeFirst) before.push(round(beforeTree, emailsFile))
      console.error(`round ${i + 1}: ${shown(after.at(-1)!)} (${PASS_NAMES.join(" / ")})`)
      if (beforeTree !== undefined)
        console.error(`  before: ${shown(before.at(-1)!)}${beforeFirst ? " (ran first)" : ""}`)
    }
    /** Per pass (and the engine's build), over the rounds, from each round's `figures`. */
    const byPass = (of: Array<Round>, figures: (measured: Round) => Array<number>) =>
      Object.fromEntries(PASS_NAMES.map((name, p) => [name, spread(of.map((measured) => figures(measured)[p]!))]))
    const cpu = (measured: Round) => measured.cpuSeconds
    const wall = (measured: Round) => measured.seconds
    const build = (of: Array<Round>) => spread(of.map((measured) => measured.buildCpuSeconds))
    const result = {
      emails: emailCount,
      rounds,
      pinned,
      passes: PASS_NAMES,
      cpuSeconds: byPass(after, cpu),
      seconds: byPass(after, wall),
      engineBuildCpuSeconds: build(after),
      ...(beforeTree === undefined
        ? {}
        : {
            beforeTree,
            before: {
              cpuSeconds: byPass(before, cpu),
              seconds: byPass(before, wall),
              engineBuildCpuSeconds: build(before)
            },
            /** CPU seconds per pass over the before tree's, within each round. */
            afterOverBefore: Object.fromEntries(
              PASS_NAMES.map((name, p) => [
                name,
                spread(
                  ratios(
                    after.map((measured) => measured.cpuSeconds[p]!),
                    before.map((measured) => measured.cpuSeconds[p]!)
                  )
                )
              ])
            ),
            engineBuildAfterOverBefore: spread(
              ratios(
                after.map((measured) => measured.buildCpuSeconds),
                before.map((measured) => measured.buildCpuSeconds)
              )
            )
          })
    }
    console.log(JSON.stringify(result))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === "--child") await child(process.argv[3]!, process.argv[4]!)
else main()
