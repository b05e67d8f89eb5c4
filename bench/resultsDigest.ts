/**
 * `node bench/resultsDigest.ts [COUNT]`: a digest of the library's answers
 * on the library benchmark's generated emails (bench/library.ts), so a change
 * to the per-email path can show that its results stay byte-identical. Every
 * email is judged against each of the bench engine's target groups and
 * offers, by an engine that remembers verdicts and one that does not, twice
 * each (the second pass reads what the first remembered); the SHA-256 of
 * every result's `JSON.stringify`, in order, is printed with the count.
 */
import { createHash } from "node:crypto"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { loadBuiltInEmailLists } from "../src/engine/policy/EmailLists.ts"
import { makeEngineContext } from "../src/engine/targeting/EngineContext.ts"
import { evaluateOffer } from "../src/engine/targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "../src/engine/targeting/evaluateTargetGroup.ts"
import { BENCH_TARGET_GROUP, benchOffer, makeBenchEngine } from "./benchEngine.ts"
import { generateEmails } from "./generateEmails.ts"

const count = Number(process.argv[2] ?? 200_000)
const table = buildInstitutionTable()
const emails = generateEmails(table, count)
const hash = createHash("sha256")
let results = 0
for (const rememberVerdicts of [true, false]) {
  const engine = makeBenchEngine(table)
  const context = makeEngineContext(table, loadBuiltInEmailLists(), { rememberVerdicts })
  for (let pass = 0; pass < 2; pass++) {
    for (const id of [BENCH_TARGET_GROUP, "bench-asia-pacific", "bench-partners"]) {
      const group = engine.targetGroups.get(id)!
      for (const email of emails) {
        hash.update(JSON.stringify(evaluateTargetGroup(group, context, email)))
        results++
      }
    }
    for (const groups of [1, 2, 3] as const) {
      const offer = engine.offers.get(benchOffer(groups))!
      for (const email of emails) {
        hash.update(JSON.stringify(evaluateOffer(offer, context, email, Date.UTC(2026, 0, 1))))
        results++
      }
    }
  }
}
console.log(JSON.stringify({ emails: count, results, sha256: hash.digest("hex") }))
