/**
 * `npm run bench:rows`: rows per second for turning verdicts into answer
 * text, the code in src against the code it replaced
 * (`bench/rowsReference.ts`), on the benchmark engine's verdicts
 * (`bench/benchEngine.ts`) for the generated emails:
 * - `jobRowsTargetGroup`, `jobRowsOffer`: a job batch of 2,048 rows as
 *   `jobs/jobBatches.ts` encodes it (`toResultRow` / `toOfferResultRow`, the
 *   text up to `duplicateOf`, the rest and a newline, each written into the
 *   batch's buffer), for the target group and the offer of three groups;
 * - `csvRows`: 2,048 lines of the CSV download (`rowCsv` of each row parsed
 *   back from its NDJSON line, with two input columns, some formula-like, and
 *   some duplicates; joined per 1,000 lines and encoded), as
 *   `jobs/jobResults.ts` streams it;
 * - `bulkAnswers`, `bulkAnswersOffer`: one `validate/bulk` answer of 1,000
 *   rows for the target group and for the offer (`rowText(toResultRow(...))`
 *   / `toOfferResultRow`, each row's text written into the answer's buffer,
 *   `server/jsonBytes.ts`, as `server/handlers/validation.ts` writes it; the
 *   summary, the same for both, left out).
 * Each side is its own instance of `bench/rowsSide.ts`, so each is compiled
 * for its own functions, as a caller in src is. A round times each loop once per side, on one slice of the emails
 * whose verdicts each side makes afresh (untimed), so every batch meets new,
 * unflattened reason strings as a request or a job does; garbage is
 * collected as it comes, so a side pays for what it allocates (a scavenge
 * also copies the verdicts still in use, as in a job batch). The order of
 * loops and of sides alternates from round to round. Many short rounds (a
 * batch takes milliseconds, wall-clock) keep a busy stretch of the shared
 * machine from deciding a figure: each is the median over the rounds with
 * its spread (min, max, and the quartiles of the speedup), `speedup`
 * (reference time / new time) taken within each round. Before timing, each
 * loop's output over all the emails is compared byte for byte between the
 * sides; any difference fails the run (this also warms both).
 * `--quick` (or BENCH_QUICK=1) for a short check; BENCH_ROUNDS sets the
 * rounds (300), BENCH_LOOPS picks loops (comma-separated names). Prints
 * progress, then one final JSON line.
 */
import { quick, ratios, spread } from "./rounds.ts"
import type { LoopName } from "./rowsSide.ts"

const LOOPS: ReadonlyArray<LoopName> = (process.env.BENCH_LOOPS?.split(",") as Array<LoopName> | undefined) ?? [
  "jobRowsTargetGroup",
  "jobRowsOffer",
  "csvRows",
  "bulkAnswers",
  "bulkAnswersOffer"
]
const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 20 : 300))
const sides = ["current", "reference"] as const
type Side = (typeof sides)[number]

const load = (side: Side): Promise<typeof import("./rowsSide.ts")> =>
  import(new URL(`./rowsSide.ts?side=${side}`, import.meta.url).href)
const modules = { current: await load("current"), reference: await load("reference") }
if (modules.current.side !== "current" || modules.reference.side !== "reference")
  throw new Error("rowsSide: one instance per side expected")
const SLICES = modules.current.SLICES

// Same bytes over all the emails, or no figures; this also warms both sides.
for (const loop of LOOPS) {
  const mine = modules.current.bytesOf(loop)
  const theirs = modules.reference.bytesOf(loop)
  if (mine.equals(theirs)) continue
  let at = 0
  while (at < mine.length && mine[at] === theirs[at]) at++
  const around = (bytes: Buffer) => JSON.stringify(bytes.subarray(Math.max(0, at - 80), at + 80).toString())
  throw new Error(`${loop}: the output differs from the reference at byte ${at}: ${around(mine)} vs ${around(theirs)}`)
}

const nanos = Object.fromEntries(
  LOOPS.map((loop): [LoopName, Record<Side, Array<number>>] => [loop, { current: [], reference: [] }])
) as Record<LoopName, Record<Side, Array<number>>>
for (let round = 0; round < rounds; round++) {
  for (const loop of round % 2 === 0 ? LOOPS : [...LOOPS].reverse()) {
    for (const side of (round >> 1) % 2 === 0 ? sides : [...sides].reverse()) {
      nanos[loop][side].push(modules[side].timeOf(loop, round % SLICES))
    }
  }
}

const quartiles = (values: ReadonlyArray<number>): readonly [number, number] => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => Math.round(sorted[Math.floor(q * (sorted.length - 1))]! * 100) / 100
  return [at(0.25), at(0.75)]
}
const figures = LOOPS.map((loop) => {
  const { current, reference } = nanos[loop]
  const speedups = ratios(reference, current)
  return {
    name: loop,
    rowsPerSecond: spread(
      current.map((n) => 1e9 / n),
      0
    ),
    referenceRowsPerSecond: spread(
      reference.map((n) => 1e9 / n),
      0
    ),
    nanosPerRow: spread(current, 0),
    referenceNanosPerRow: spread(reference, 0),
    /** Reference time / new time, per round. */
    speedup: spread(speedups),
    speedupQuartiles: quartiles(speedups)
  }
})
for (const f of figures) {
  console.error(
    `${f.name}: ${f.nanosPerRow.median} ns/row (${f.nanosPerRow.min}-${f.nanosPerRow.max}), reference ${f.referenceNanosPerRow.median} ns/row (${f.referenceNanosPerRow.min}-${f.referenceNanosPerRow.max}); speedup ${f.speedup.median}x (quartiles ${f.speedupQuartiles.join("-")})`
  )
}
console.log(JSON.stringify({ rounds, quick, clock: "wall", loops: figures }))
