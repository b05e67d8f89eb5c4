/**
 * `npm run rules`: every measured rule of the built data, with what it
 * infers and its precision, measured again here from the bundled data and
 * checked against what the build compiled: the type rules (leave-one-out on
 * the institutions their names type, `typeInference.ts`), the place rules
 * (on the institutions whose data states a country, `placeCountries.ts`)
 * and the candidate model's cross-validated AUC and recommended score
 * (`scripts/data/candidateModel.ts`). Exits non-zero when a shipped figure
 * differs from the one measured. Prints a table, then one final JSON line.
 */

import { loadBuiltInInstitutions } from "../src/engine/InstitutionIndex.ts"
import { builtInCandidateModel } from "../src/engine/institutions/CandidateScorer.ts"
import {
  buildPlaceIndex,
  measureCountryLabelRule,
  measurePlaceRule
} from "../src/engine/institutions/placeCountries.ts"
import { builtInSubdivisions } from "../src/engine/institutions/Subdivisions.ts"
import { confidenceOf, measureTypeRules } from "../src/engine/institutions/typeInference.ts"

const data = loadBuiltInInstitutions()
const measured = measureTypeRules(data)
const shipped = new Map((data.typeRules ?? []).map((row) => [row[0], row]))
const differing: Array<string> = []
console.log("rule                                    type        precision  measured on  confidence")
for (const [rule, type, precision, support] of measured) {
  console.log(
    `${rule.padEnd(40)}${type.padEnd(12)}${precision.toFixed(3).padStart(9)}  ${String(support).padStart(11)}  ${confidenceOf(precision, support)}`
  )
  const compiled = shipped.get(rule)
  if (compiled === undefined || compiled[1] !== type || compiled[2] !== precision || compiled[3] !== support) {
    differing.push(rule)
  }
}
if (shipped.size !== measured.length) differing.push(`${shipped.size} rules shipped, ${measured.length} measured`)

const places = buildPlaceIndex(builtInSubdivisions())
const placeRule = measurePlaceRule(data, places)
const countryInLabel = measureCountryLabelRule(data, places)
const shippedPlaces = data.placeRule
if (
  shippedPlaces === undefined ||
  shippedPlaces.precision !== placeRule.precision ||
  shippedPlaces.support !== placeRule.support ||
  shippedPlaces.countryInLabelPrecision !== countryInLabel.precision ||
  shippedPlaces.countryInLabelSupport !== countryInLabel.support
) {
  differing.push("the place rules")
}
console.log(`\nplace-name        precision ${placeRule.precision} on ${placeRule.support}`)
console.log(`country-in-label  precision ${countryInLabel.precision} on ${countryInLabel.support}`)
const model = builtInCandidateModel()
console.log(
  `candidates        AUC ${model.auc} (5-fold), recommended minScore ${model.recommended.minScore}: recall ${model.recommended.recall}, false positives ${model.recommended.falsePositiveRate}`
)
if (differing.length > 0) {
  console.error(`\nshipped rules differ from the measured ones: ${differing.join(", ")}`)
  process.exitCode = 1
}
console.log(
  JSON.stringify({
    typeRules: measured.length,
    differing: differing.length,
    placeRule,
    countryInLabel,
    candidates: { auc: model.auc, recommended: model.recommended, trainedOn: model.trainedOn }
  })
)
