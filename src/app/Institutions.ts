/**
 * The questions transports ask of the institution data in force: a search
 * (`engine/institutions/InstitutionSearch.ts`), the institution a domain or
 * address belongs to (`engine/institutionOf.ts`) — or, for a valid host
 * with none, why, in a sentence — and what Campusgate knows of one email or
 * domain (`engine/inspect.ts`). The HTTP handlers and the library ask the
 * snapshot's engine (`Institutions.layer`, `makeInstitutions`); `campusgate
 * inspect` asks the data of the config's datasets and the ones it is given
 * (`institutionsOf`), and `campusgate data diff` compares two indexes
 * (`diffInstitutionData`).
 *
 * It lives in the core, not in a slice: it reads the snapshot, which only
 * `app/` and what stands above it may import, and it has no store of its own.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { InstitutionMatch } from "../domain/InstitutionMatch.ts"
import { nonInstitutionPhrase } from "../domain/NonInstitution.ts"
import { importedIndexFile, readImportedIndex } from "../engine/data/builtInData.ts"
import { buildInstitutionTable, loadBuiltInInstitutions } from "../engine/InstitutionIndex.ts"
import { type InspectResult, inspectInput } from "../engine/inspect.ts"
import { hostOf, institutionOf } from "../engine/institutionOf.ts"
import { diffIndexes, type IndexDiff } from "../engine/institutions/diffIndex.ts"
import {
  type InstitutionPage,
  type InstitutionQuery,
  InstitutionSearch
} from "../engine/institutions/InstitutionSearch.ts"
import type { InstitutionsData } from "../engine/institutions/InstitutionsData.ts"
import type { DatasetSpec } from "../engine/institutions/userDatasets.ts"
import { loadBuiltInEmailLists } from "../engine/policy/EmailLists.ts"
import { type EngineContext, makeEngineContext } from "../engine/targeting/EngineContext.ts"
import { Snapshot } from "./Snapshot.ts"

export type { IndexDiff } from "../engine/institutions/diffIndex.ts"
export type { InstitutionPage, InstitutionQuery } from "../engine/institutions/InstitutionSearch.ts"
export type { InstitutionsData } from "../engine/institutions/InstitutionsData.ts"
export { type DatasetSpec, datasetFormatOf, UNKNOWN_DATASET_FORMAT } from "../engine/institutions/userDatasets.ts"

/** The institution a domain or address belongs to; none (and why) for a valid host; or not a host at all. */
export type InstitutionLookup =
  | { readonly kind: "found"; readonly match: InstitutionMatch }
  | { readonly kind: "none"; readonly host: string; readonly why: string }
  | { readonly kind: "invalid" }

export interface InstitutionsService {
  /** A page of the institutions matching `query`, best first. */
  search(query: InstitutionQuery): InstitutionPage
  lookup(emailOrDomain: string): InstitutionLookup
  /** The institution an email address or host belongs to and whom the host serves; undefined when none. */
  institutionOf(emailOrDomain: string): InstitutionMatch | undefined
  /** What is known about one email address or bare domain, whatever the target. */
  inspect(emailOrDomain: string): InspectResult
}

/** Why a valid host has no institution, in a sentence. */
const whyNone = (context: EngineContext, host: string): string => {
  const match = context.index.lookup(host)
  if (match.kind === "non-institution") {
    const organization = match.entry.organization
    return `${host} belongs to ${organization.name ?? match.matchedDomain}, ${nonInstitutionPhrase[organization.kind]}, not an educational institution.`
  }
  if (match.kind === "deny")
    return `${host} is not an institution's domain (it is on the ${match.entry.source.dataset} stoplist).`
  return `${host} belongs to no known institution.`
}

const lookup = (context: EngineContext, input: string): InstitutionLookup => {
  const host = hostOf(input)
  if (host === undefined) return { kind: "invalid" }
  const match = institutionOf(context, host)
  return match === undefined ? { kind: "none", host, why: whyNone(context, host) } : { kind: "found", match }
}

/** The service over the engine context `context` answers at each call (the one in force). */
export const makeInstitutions = (context: () => EngineContext): InstitutionsService => ({
  search: (query) => InstitutionSearch.of(context().index).search(query),
  lookup: (input) => lookup(context(), input),
  institutionOf: (input) => institutionOf(context(), input),
  inspect: (input) => inspectInput(context(), input)
})

/**
 * The service over the built-in data (or the data directory's imported
 * index) with `datasets` merged on top, without a snapshot; throws
 * `DatasetError` for a dataset that does not parse.
 */
export const institutionsOf = (sources: {
  readonly datasets: ReadonlyArray<DatasetSpec>
  readonly dataDir: string | undefined
}): InstitutionsService => {
  const context = makeEngineContext(buildInstitutionTable(sources), loadBuiltInEmailLists())
  return makeInstitutions(() => context)
}

/**
 * The domains added, removed and changed in type or country from one index
 * to another: `from` by default the built-in index, `to` an index or the
 * one imported into a data directory (an error when there is none).
 */
export const diffInstitutionData = (
  from: InstitutionsData | undefined,
  to: InstitutionsData | { readonly dataDir: string }
): IndexDiff => {
  const source = from ?? loadBuiltInInstitutions()
  let target: InstitutionsData
  if (!("dataDir" in to)) target = to
  else {
    const imported = readImportedIndex(to.dataDir) as InstitutionsData | undefined
    if (imported === undefined) {
      throw new Error(`${importedIndexFile(to.dataDir)} does not exist: run campusgate data import, or give --to`)
    }
    target = imported
  }
  return diffIndexes(source, target)
}

export class Institutions extends Context.Service<Institutions, InstitutionsService>()("campusgate/app/Institutions") {
  /** Over the snapshot in force: each question asks the engine serving at that moment. */
  static readonly layer: Layer.Layer<Institutions, never, Snapshot> = Layer.effect(
    Institutions,
    Effect.map(Effect.service(Snapshot), (snapshots) => makeInstitutions(() => snapshots.current().engine.context))
  )
}
