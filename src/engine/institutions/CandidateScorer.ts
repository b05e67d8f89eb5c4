/**
 * Scores unknown domains at run time (`candidates.ts`): the model compiled
 * at build time (`dist/data/candidates.json`) with the knowledge of names
 * and places built from the institution table in use, and the answers for
 * the last hosts met kept, so a domain seen again costs a look-up.
 *
 * The knowledge is compiled with every table read from a file (the
 * built-in one, an imported one, one merged with user datasets:
 * `InstitutionIndex.ts`), so the first unknown domain only parses it
 * (~10-20 ms) where building it on the request thread took ~0.3 s, and
 * 4-8 s on a loaded machine. A table made in memory (`fromData`: reviewed
 * institutions, tests) builds it from its institutions on first use.
 */
import { parse } from "tldts"
import type { Candidate } from "../../domain/InstitutionReview.ts"
import { readBuiltInJson } from "../data/builtInData.ts"
import { letterRatios } from "./candidateLetters.ts"
import {
  buildCandidateKnowledge,
  type CandidateKnowledge,
  type CandidateModel,
  candidateModelFormat,
  featuresOf,
  placesOf,
  scoreFeatures
} from "./candidates.ts"
import type { InstitutionsData } from "./InstitutionsData.ts"
import type { InstitutionTable } from "./InstitutionTable.ts"
import { builtInSubdivisions, type Subdivisions } from "./Subdivisions.ts"

export const candidateModelFile = "candidates.json"

let builtInModel: CandidateModel | undefined

/** The compiled model; throws `BuiltInDataMissing` when the build has not run. */
export const builtInCandidateModel = (): CandidateModel => {
  if (builtInModel === undefined) {
    const model = readBuiltInJson(candidateModelFile) as CandidateModel
    if (model.format !== candidateModelFormat) {
      throw new Error(`${candidateModelFile}: format ${String(model.format)}, expected ${candidateModelFormat}`)
    }
    builtInModel = model
  }
  return builtInModel
}

/** A host's candidate, and the sentence a refusal adds about it. */
export interface Scored {
  readonly candidate: Candidate
  readonly phrase: string
}

/** How many hosts' candidates a table keeps. */
const remembered = 10_000

export class CandidateScorer {
  readonly model: CandidateModel
  readonly #knowledge: CandidateKnowledge
  readonly #letters: ReadonlyMap<string, number>
  /** The last hosts met, oldest first (a `Map` keeps insertion order). */
  readonly #byHost = new Map<string, Scored | null>()

  constructor(model: CandidateModel, table: InstitutionTable) {
    this.model = model
    this.#letters = letterRatios(model.letters)
    this.#knowledge =
      table.candidateKnowledge() ??
      buildCandidateKnowledge({ institutions: table.institutions, places: placesOf(builtInSubdivisions()) })
  }

  /** The candidate of a host's registrable domain, or null when the host has none (a bare suffix, an address literal). */
  candidateOf(host: string): Candidate | null {
    return this.scored(host)?.candidate ?? null
  }

  /** `candidateOf` with the phrase a refusal says of it, made once per host. */
  scored(host: string): Scored | null {
    const known = this.#byHost.get(host)
    if (known !== undefined) return known
    const parsed = parse(host)
    const candidate =
      parsed.domain === null || parsed.domainWithoutSuffix === null || parsed.publicSuffix === null || parsed.isIp
        ? null
        : scoreFeatures(
            this.model,
            parsed.domain,
            featuresOf(
              { domain: parsed.domain, label: parsed.domainWithoutSuffix, suffix: parsed.publicSuffix },
              this.#knowledge,
              this.#letters
            )
          )
    const scored =
      candidate === null
        ? null
        : { candidate, phrase: ` As a likely institution ${candidate.domain} scores ${candidate.score}.` }
    if (this.#byHost.size >= remembered) this.#byHost.delete(this.#byHost.keys().next().value!)
    this.#byHost.set(host, scored)
    return scored
  }
}

/** The knowledge of a table compiled from `data` (its institutions' names and countries, and every country's places). */
export const compileCandidateKnowledge = (
  data: InstitutionsData,
  subdivisions: Subdivisions = builtInSubdivisions()
): CandidateKnowledge =>
  buildCandidateKnowledge({
    institutions: data.institutions.map(([, name, country, , , , , , names]) => ({ name, country, names })),
    places: placesOf(subdivisions)
  })

const scorers = new WeakMap<InstitutionTable, CandidateScorer>()

/** The scorer of a table, made on first use with the built-in model. */
export const candidateScorer = (table: InstitutionTable): CandidateScorer => {
  let scorer = scorers.get(table)
  if (scorer === undefined) {
    scorer = new CandidateScorer(builtInCandidateModel(), table)
    scorers.set(table, scorer)
  }
  return scorer
}
