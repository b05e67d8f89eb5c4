/**
 * The institution endpoints: search the institution index, and look up the
 * institution a domain belongs to. The index is open data (ROR, swot, the
 * Hipo snapshot) and says nothing about any team, so any valid key may read
 * it: a key that validates needs it to explain answers, one that manages
 * target groups to pick institutions, and a sign-up form to offer a list.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { CountryCode } from "../domain/Country.ts"
import { Institution, InstitutionType } from "../domain/Institution.ts"
import { InstitutionMatch } from "../domain/InstitutionMatch.ts"
import { Authorization } from "./Authorization.ts"
import { Page, pageQueryFields, readErrors } from "./resources.ts"

export const INSTITUTION_QUERY_MAX = 200

export const InstitutionSearchQuery = Schema.Struct({
  /** Free text: every word a prefix of a word of the name, another name, an acronym or a domain label. */
  q: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMaxLength(INSTITUTION_QUERY_MAX)))),
  country: Schema.optionalKey(CountryCode),
  type: Schema.optionalKey(InstitutionType),
  ...pageQueryFields(100)
})
export type InstitutionSearchQuery = typeof InstitutionSearchQuery.Type

export class InstitutionsApi extends HttpApiGroup.make("institutions")
  .add(
    HttpApiEndpoint.get("search", "/institutions", {
      query: InstitutionSearchQuery,
      success: Page(Institution, "InstitutionPage"),
      error: readErrors
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Search institutions by name, acronym or domain, country and type",
        description:
          "Accent- and case-insensitive; every word of `q` is a prefix of a word of the institution's name, other names, acronyms or domain labels (`tech univ munich`, `TUM`). Best matches first; without `q`, every institution passing the filters, by name."
      })
    ),
    HttpApiEndpoint.get("get", "/institutions/:domain", {
      params: { domain: Schema.String.annotate({ examples: ["ox.ac.uk"] }) },
      success: InstitutionMatch,
      error: readErrors
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The institution a domain belongs to",
        description:
          "The institution of a host or email domain (`cs.ox.ac.uk`), how it matched (a listed domain, or an academic zone with its registry policy), whom the host serves (student, staff, alumni, mixed) and the evidence for each fact. 404 for a host that belongs to no institution, with the reason (a research network, sector body, government body or platform; a stoplisted host; unknown)."
      })
    )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "The institution data behind the decisions: search it by name, country and type, or look up a domain or an address."
    })
  )
  .middleware(Authorization) {}
