/**
 * Fits the candidate model (`src/engine/institutions/candidates.ts`) on the
 * bundled data, at build time: the registrable domains of the compiled
 * institutions outside academic zones (where unknown domains are met)
 * against the project's own negatives — the curated non-institutions, the
 * ROR organisations that are not educational (companies, government,
 * healthcare, facilities, funders), the free-mail providers and a sample
 * of the disposable domains. Never the evaluation samples. Measures the
 * model by 5-fold cross-validation (ROC AUC; the score whose
 * false-positive rate stays at or under 0.3%, the recommended
 * `acceptCandidates.minScore`) and fits the shipped weights on all of it.
 */
import { parse } from "tldts"
import { fitLetters, letterRatios } from "../../src/engine/institutions/candidateLetters.ts"
import {
  buildCandidateKnowledge,
  type CandidateKnowledge,
  type CandidateModel,
  candidateModelFormat,
  featureIds,
  featuresOf,
  ownWordsOf,
  placesOf
} from "../../src/engine/institutions/candidates.ts"
import type { InstitutionsData } from "../../src/engine/institutions/InstitutionsData.ts"
import { type Example, fitLogistic, probability, rocAuc } from "../../src/engine/institutions/logistic.ts"
import type { Subdivisions } from "../../src/engine/institutions/Subdivisions.ts"
import type { RorSnapshot } from "../../src/engine/institutions/sources/SourceSnapshot.ts"

export interface CandidateInputs {
  readonly institutions: InstitutionsData
  readonly ror: RorSnapshot
  readonly freeMail: ReadonlyArray<string>
  readonly disposable: ReadonlyArray<string>
  readonly subdivisions: Subdivisions
}

interface Labelled {
  readonly domain: string
  readonly label: string
  readonly suffix: string
  readonly positive: boolean
  readonly own?: ReturnType<typeof ownWordsOf>
}

/** The registrable domain's label and suffix, or undefined for a host below one or under an academic zone. */
const partsOf = (domain: string, zones: ReadonlySet<string>) => {
  const parsed = parse(domain)
  if (parsed.domain !== domain || parsed.publicSuffix === null || parsed.domainWithoutSuffix === null) return undefined
  const suffix = parsed.publicSuffix
  for (let at = 0; at >= 0; at = suffix.indexOf(".", at) < 0 ? -1 : suffix.indexOf(".", at) + 1) {
    if (zones.has(suffix.slice(at))) return undefined
    if (suffix.indexOf(".", at) < 0) break
  }
  return { domain, label: parsed.domainWithoutSuffix, suffix }
}

export const examplesOf = (
  inputs: CandidateInputs
): { readonly examples: Array<Labelled>; readonly knowledge: CandidateKnowledge } => {
  const data = inputs.institutions
  const zones = new Set(data.suffixRules.map((rule) => rule[0]))
  const knowledge = buildCandidateKnowledge({
    institutions: data.institutions.map((row) => ({ country: row[2], name: row[1], names: row[8] })),
    places: placesOf(inputs.subdivisions)
  })
  const seen = new Set<string>()
  const examples: Array<Labelled> = []
  for (const row of data.institutions) {
    const own = ownWordsOf(row[1], row[8])
    for (const domain of row[7]) {
      const parts = partsOf(domain, zones)
      if (parts === undefined || seen.has(domain)) continue
      seen.add(domain)
      examples.push({ ...parts, positive: true, own })
    }
  }
  const negative = (domain: string) => {
    const parts = partsOf(domain.toLowerCase(), zones)
    if (parts === undefined || seen.has(parts.domain)) return
    seen.add(parts.domain)
    examples.push({ ...parts, positive: false })
  }
  for (const row of data.nonInstitutions) negative(row[0])
  for (const record of inputs.ror.records) {
    if (record[2].includes("education")) continue
    for (const domain of [...record[6], ...record[7]]) negative(domain)
  }
  for (const domain of inputs.freeMail) negative(domain)
  inputs.disposable.forEach((domain, i) => {
    if (i % 40 === 0) negative(domain)
  })
  return { examples, knowledge }
}

/** The score at which the false-positive rate on `negatives` is at most `rate`. */
const thresholdFor = (negatives: ReadonlyArray<number>, rate: number): number => {
  const sorted = [...negatives].sort((a, b) => b - a)
  const allowed = Math.floor(sorted.length * rate)
  return Math.min(1, (sorted[allowed] ?? 0) + 0.001)
}

const folds = 5

/**
 * Each example's features with the letter model fitted without its fold
 * (stacking: the letters of a domain never score the domain itself).
 */
const outOfFold = (labelled: ReadonlyArray<Labelled>, knowledge: CandidateKnowledge): Array<Example> => {
  const examples = new Array<Example>(labelled.length)
  for (let fold = 0; fold < folds; fold++) {
    const letters = letterRatios(fitLetters(labelled.filter((_, i) => i % folds !== fold)))
    labelled.forEach((l, i) => {
      if (i % folds !== fold) return
      examples[i] = { features: featuresOf(l, knowledge, letters, l.own), positive: l.positive }
    })
  }
  return examples
}

export const compileCandidateModel = (inputs: CandidateInputs): CandidateModel => {
  const { examples: labelled, knowledge } = examplesOf(inputs)
  const examples = outOfFold(labelled, knowledge)
  const scores: Array<{ readonly score: number; readonly positive: boolean }> = []
  for (let fold = 0; fold < folds; fold++) {
    const fitted = fitLogistic(
      examples.filter((_, i) => i % folds !== fold),
      featureIds
    )
    examples.forEach((example, i) => {
      if (i % folds !== fold) return
      scores.push({ score: probability(fitted, example.features), positive: example.positive })
    })
  }
  const positives = scores.filter((s) => s.positive).map((s) => s.score)
  const negatives = scores.filter((s) => !s.positive).map((s) => s.score)
  const minScore = Math.round(thresholdFor(negatives, 0.003) * 1000) / 1000
  const fitted = fitLogistic(examples, featureIds)
  const ratio = (n: number, d: number) => Math.round((n / d) * 10_000) / 10_000
  return {
    format: candidateModelFormat,
    letters: fitLetters(labelled),
    ...fitted,
    recommended: {
      minScore,
      recall: ratio(positives.filter((s) => s >= minScore).length, positives.length),
      falsePositiveRate: ratio(negatives.filter((s) => s >= minScore).length, negatives.length)
    },
    auc: Math.round(rocAuc(positives, negatives) * 10_000) / 10_000,
    trainedOn: { positives: positives.length, negatives: negatives.length }
  }
}
