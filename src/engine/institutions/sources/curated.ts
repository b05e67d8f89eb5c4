/**
 * The curated list of organisations that are not educational institutions
 * (`datasets/non-institutions.yaml`): a YAML list of
 * `{ domain, kind, name, country? }`, decoded with every bad entry reported.
 */
import * as Schema from "effect/Schema"
import { parse } from "yaml"
import { CountryCode } from "../../../domain/Country.ts"
import { NonInstitutionKind } from "../../../domain/NonInstitution.ts"
import { DomainName } from "../../../domain/TargetGroup.ts"

export const CuratedNonInstitution = Schema.Struct({
  domain: DomainName,
  kind: NonInstitutionKind,
  name: Schema.NonEmptyString,
  country: Schema.optionalKey(CountryCode)
})
export type CuratedNonInstitution = typeof CuratedNonInstitution.Type

const decode = Schema.decodeUnknownSync(Schema.Array(CuratedNonInstitution), { onExcessProperty: "error" })

/** Parses the curated list; throws with the problem when an entry is not valid. */
export const parseCuratedNonInstitutions = (yamlText: string): ReadonlyArray<CuratedNonInstitution> => {
  const entries = decode(parse(yamlText) ?? [])
  const seen = new Set<string>()
  for (const entry of entries) {
    if (seen.has(entry.domain)) throw new Error(`non-institutions: ${entry.domain} is listed twice`)
    seen.add(entry.domain)
  }
  return entries
}
