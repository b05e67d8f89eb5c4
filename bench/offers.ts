/**
 * `npm run bench:offers`: µs per offer validation for offers of 1, 2 and 3
 * target groups, the engine's `evaluateOffer` (the email parsed and its host
 * looked up once, then each group judges those facts) against the per-group
 * composition it replaced (`bench/perGroupOffer.ts`: each group evaluated on
 * its own), on the generated benchmark emails and the benchmark engine's
 * offers (`benchOffer`). Each is timed twice: the validation alone, and the
 * validation with its result row written (`rowText(toOfferResultRow(...))`,
 * what bulk answers and jobs write), so that work moved from the validation
 * into the answer's text cannot pass for a gain. Rounds alternate the twelve
 * loops (and which of the two goes first), each timed in CPU time; figures
 * are medians over the rounds with their spread, ratios taken within a round. Both loops must
 * count the same valid answers and matched groups, or the run fails. Goal
 * (issue 16): three groups cost close to one. `--quick` (or BENCH_QUICK=1)
 * for a short check. Prints progress, then one final JSON line.
 */

import { toOfferResultRow } from "../src/domain/ResultRow.ts"
import { rowText } from "../src/domain/rowText.ts"
import type { OfferValidationResult } from "../src/domain/ValidationResult.ts"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import type { CompiledOffer } from "../src/engine/targeting/evaluateOffer.ts"
import { evaluateOffer } from "../src/engine/targeting/evaluateOffer.ts"
import { benchOffer, makeBenchEngine } from "./benchEngine.ts"
import { generateEmails } from "./generateEmails.ts"
import { perGroupOffer } from "./perGroupOffer.ts"
import { quick, ratios, spread, timed } from "./rounds.ts"

const count = Number(process.env.BENCH_EMAILS ?? (quick ? 20_000 : 300_000))
const rounds = quick ? 3 : 11

const table = buildInstitutionTable()
const engine = makeBenchEngine(table)
const emails = generateEmails(table, count)
const now = engine.now()
const sizes = [1, 2, 3] as const

type Evaluate = (
  offer: CompiledOffer,
  context: typeof engine.context,
  input: string,
  now: number
) => OfferValidationResult

/**
 * One pass over the emails, with or without each result's row text. The
 * checksum counts valid answers and matched groups apart (valid * 2^21 +
 * matched), plus the rows' length when written.
 */
const pass = (evaluate: Evaluate, offer: CompiledOffer, withRow: boolean) => (): number => {
  let valid = 0
  let matched = 0
  let written = 0
  for (let i = 0; i < emails.length; i++) {
    const email = emails[i]!
    const result = evaluate(offer, engine.context, email, now)
    if (result.isValid) valid++
    matched += result.matchedTargetGroups.length
    if (withRow) written += rowText(toOfferResultRow(email, result)).length
  }
  return valid * 2 ** 21 + matched + written * 2 ** 42
}

interface Side {
  readonly run: () => number
  readonly micros: Array<number>
  checksum: number
}
const side = (run: () => number): Side => ({ run, micros: [], checksum: 0 })

const loops = [false, true].flatMap((withRow) =>
  sizes.map((groups) => {
    const offer = engine.offers.get(benchOffer(groups))!
    return {
      groups,
      withRow,
      engine: side(pass(evaluateOffer, offer, withRow)),
      perGroup: side(pass(perGroupOffer, offer, withRow))
    }
  })
)

// One untimed round warms every loop (compilation, the host directory's keys and verdicts).
for (const loop of loops) {
  loop.engine.run()
  loop.perGroup.run()
}
for (let round = 0; round < rounds; round++) {
  for (const loop of round % 2 === 0 ? loops : [...loops].reverse()) {
    for (const s of round % 2 === 0 ? [loop.engine, loop.perGroup] : [loop.perGroup, loop.engine]) {
      const t = timed(s.run)
      s.micros.push((t.cpuMs * 1000) / emails.length)
      s.checksum = t.checksum
    }
  }
}
for (const loop of loops) {
  if (loop.engine.checksum !== loop.perGroup.checksum)
    throw new Error(`${loop.groups} groups: the engine and the per-group composition answered differently`)
}

const figuresOf = (withRow: boolean) => {
  const mine = loops.filter((loop) => loop.withRow === withRow)
  const one = mine[0]!
  return mine.map((loop) => ({
    groups: loop.groups,
    engineMicros: spread(loop.engine.micros, 3),
    perGroupMicros: spread(loop.perGroup.micros, 3),
    /** The engine's cost against the per-group composition's, same groups. */
    engineVsPerGroup: spread(ratios(loop.engine.micros, loop.perGroup.micros)),
    /** Against one group, each side against its own one-group figure. */
    engineVsOneGroup: spread(ratios(loop.engine.micros, one.engine.micros)),
    perGroupVsOneGroup: spread(ratios(loop.perGroup.micros, one.perGroup.micros)),
    valid: Math.floor((loop.engine.checksum % 2 ** 42) / 2 ** 21)
  }))
}
const validation = figuresOf(false)
const withRow = figuresOf(true)
for (const [what, figures] of [
  ["validation", validation],
  ["validation + row text", withRow]
] as const) {
  for (const f of figures) {
    console.error(
      `${what}, ${f.groups} group(s): engine ${f.engineMicros.median} µs (${f.engineMicros.min}-${f.engineMicros.max}), per group ${f.perGroupMicros.median} µs (${f.perGroupMicros.min}-${f.perGroupMicros.max}); engine/per-group ${f.engineVsPerGroup.median}, engine vs 1 group ${f.engineVsOneGroup.median}x, per group vs 1 group ${f.perGroupVsOneGroup.median}x (${f.valid} valid)`
    )
  }
}
console.log(
  JSON.stringify({
    emails: emails.length,
    rounds,
    quick,
    clock: "cpu",
    validation,
    withRow,
    goals: {
      threeGroupsWithin1_5xOfOne: validation[2]!.engineVsOneGroup.median <= 1.5,
      threeGroupsWithRowWithin1_5xOfOne: withRow[2]!.engineVsOneGroup.median <= 1.5
    }
  })
)
