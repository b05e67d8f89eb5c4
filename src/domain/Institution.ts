/**
 * An academic institution as the index knows it, with the provenance of every
 * fact: which dataset named it, where its country came from, and which rule
 * matched an email to it.
 */
import * as Schema from "effect/Schema"

export const InstitutionType = Schema.Literals(["university", "college", "school", "research", "other"])
export type InstitutionType = typeof InstitutionType.Type

export const InstitutionFlag = Schema.Literals(["abused"])
export type InstitutionFlag = typeof InstitutionFlag.Type

/** Where the institution's country was taken from, most trusted first. */
export const CountrySource = Schema.Literals(["dataset", "cctld", "suffix-rule"])
export type CountrySource = typeof CountrySource.Type

/** A dataset a fact came from: the npm package or user file, with its version or path. */
export const DataSource = Schema.Struct({
  dataset: Schema.String,
  version: Schema.optionalKey(Schema.String)
})
export type DataSource = typeof DataSource.Type

export const Institution = Schema.Struct({
  id: Schema.String,
  name: Schema.NullOr(Schema.String),
  domains: Schema.Array(Schema.String),
  country: Schema.NullOr(Schema.String),
  countrySource: Schema.NullOr(CountrySource),
  region: Schema.NullOr(Schema.String),
  type: InstitutionType,
  flags: Schema.Array(InstitutionFlag),
  sources: Schema.Array(DataSource)
})
export type Institution = typeof Institution.Type

/**
 * How an email host was matched to an institution: a listed domain (high
 * confidence) or an academic suffix rule such as `edu.cn` (lower confidence).
 */
export const MatchRule = Schema.Literals(["listed-domain", "academic-suffix"])
export type MatchRule = typeof MatchRule.Type
