/**
 * The target-group endpoints: create, list and read. A target group is
 * written as in the config YAML; what `GET` returns, `POST` accepts back
 * (the server-set `source` is ignored). A key sees its team's groups and
 * the shared ones (no `team`); another team's group is 404, never 403.
 * A group created through the API belongs to the caller's team.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { TargetGroup } from "../domain/TargetGroup.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { BadRequest, Conflict, InternalError, NotFound, ServiceUnavailable, TooManyRequests } from "./problems.ts"
import { Page, PageQuery, ResourceSource } from "./resources.ts"

/** A target group as the API answers it: the YAML fields plus where it is defined. */
export const TargetGroupResource = Schema.Struct({ ...TargetGroup.fields, source: ResourceSource })
export type TargetGroupResource = typeof TargetGroupResource.Type

// The OpenAPI examples: new groups of team acme, written like those in the shipped config/.
const ukUniversities = {
  id: "acme-uk-universities",
  name: "Universities in the United Kingdom",
  team: "acme",
  criteria: {
    institutions: { types: ["university"], countries: ["GB"] },
    email: { rejectRoleAccounts: true, rejectFreeMail: true }
  },
  examples: { valid: ["sam@cs.ox.ac.uk"], invalid: ["admin@ox.ac.uk", "john@mit.edu"] }
} as const

/** A target group to create: `team` must be the caller's or absent; `source` is accepted and ignored. */
export const CreateTargetGroupRequest = Schema.Struct({
  ...TargetGroup.fields,
  source: Schema.optionalKey(ResourceSource)
}).pipe(
  Schema.annotateEncoded({
    examples: [
      ukUniversities,
      {
        id: "acme-bootcamps",
        name: "Acme bootcamp partners",
        description: "Partner bootcamps; their staff sub-domain is not eligible.",
        criteria: { domains: { allow: ["bootcamp.example"], deny: ["staff.bootcamp.example"] } }
      }
    ]
  })
)
export type CreateTargetGroupRequest = typeof CreateTargetGroupRequest.Type

/** `acme-uk-universities` as created: every default of its criteria spelled out. */
const createdExample: typeof TargetGroupResource.Encoded = {
  ...ukUniversities,
  criteria: {
    institutions: { ...ukUniversities.criteria.institutions, includeSuffixRules: true },
    email: {
      rejectDisposable: true,
      rejectRoleAccounts: true,
      rejectFreeMail: true,
      rejectAbused: true,
      rejectConfusable: true,
      allowQuotedLocalPart: false,
      allowIpLiteral: false,
      allowSpecialUseDomains: false
    }
  },
  source: "api"
}

const readErrors = [BadRequest, NotFound, TooManyRequests, ServiceUnavailable] as const

export class TargetGroupsApi extends HttpApiGroup.make("targetGroups")
  .add(
    HttpApiEndpoint.post("create", "/target-groups", {
      payload: CreateTargetGroupRequest,
      success: TargetGroupResource.pipe(
        Schema.annotateEncoded({ examples: [createdExample] }),
        HttpApiSchema.status(201)
      ),
      error: [BadRequest, Conflict, TooManyRequests, InternalError, ServiceUnavailable]
    })
      .annotate(RequiredScope, "target-groups:write")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Create a target group of the caller's team",
          description:
            "The body is a target group as in the config YAML (what GET returns is accepted back). It is stored in the data directory and can be validated against at once. An id that exists already is 409."
        })
      ),
    HttpApiEndpoint.get("list", "/target-groups", {
      query: PageQuery,
      success: Page(TargetGroupResource),
      error: readErrors
    })
      .annotate(RequiredScope, "target-groups:read")
      .annotateMerge(
        OpenApi.annotations({ summary: "List the caller's team's target groups and the shared ones, ordered by id" })
      ),
    HttpApiEndpoint.get("get", "/target-groups/:id", {
      params: { id: Schema.String },
      success: TargetGroupResource,
      error: readErrors
    })
      .annotate(RequiredScope, "target-groups:read")
      .annotateMerge(OpenApi.annotations({ summary: "Read a target group" }))
  )
  .middleware(Authorization) {}
