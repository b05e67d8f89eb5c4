/**
 * The target-group endpoints: create, list, read, change (a JSON merge
 * patch) and delete. A target group is written as in the config YAML; what
 * `GET` returns, `POST` accepts back (the server-set `source` is ignored).
 * A key sees its team's groups and the shared ones (no `team`); another
 * team's group is 404, never 403. A group created through the API belongs
 * to the caller's team; groups in the config directory are read-only here
 * (409), and a group offers still use cannot be deleted (409 naming them).
 */
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { TargetGroupId, TeamId } from "../domain/Identifiers.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"
import { Authorization } from "./Authorization.ts"
import { idParam, resourceEndpoints } from "./resourceEndpoints.ts"
import { NestedPatch, PageQuery, ResourceSource } from "./resources.ts"

/** A target group as the API answers it: the YAML fields plus where it is defined. */
export const TargetGroupResource = Schema.Struct({ ...TargetGroup.fields, source: ResourceSource }).annotate({
  identifier: "TargetGroup"
})
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

/**
 * A change to a target group as a JSON merge patch (RFC 7396): the fields
 * given replace the group's, `null` removes an optional one, and `criteria`
 * is merged criterion by criterion (`{"criteria": {"email": {"rejectFreeMail":
 * true}}}` changes that one setting). The result is checked as a new group
 * would be; `id` and `team` cannot change.
 */
export const UpdateTargetGroupRequest = Schema.Struct({
  id: Schema.optionalKey(TargetGroupId),
  team: Schema.optionalKey(TeamId),
  name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  criteria: Schema.optionalKey(NestedPatch),
  examples: Schema.optionalKey(Schema.NullOr(NestedPatch)),
  source: Schema.optionalKey(Schema.Unknown)
}).pipe(
  Schema.annotateEncoded({
    examples: [
      { criteria: { email: { rejectFreeMail: true } } },
      { name: "UK universities and colleges", criteria: { institutions: { types: ["university", "college"] } } },
      { description: null, examples: null }
    ]
  })
)
export type UpdateTargetGroupRequest = typeof UpdateTargetGroupRequest.Type

// The docs page's snippets read, change and delete the group its create example makes (those of the config are read-only).
const targetGroupEndpoints = resourceEndpoints({
  path: "/target-groups",
  scopes: { read: "target-groups:read", write: "target-groups:write" },
  resource: TargetGroupResource,
  pageIdentifier: "TargetGroupPage",
  createRequest: CreateTargetGroupRequest,
  updateRequest: UpdateTargetGroupRequest,
  listQuery: PageQuery,
  idParam: idParam("acme-uk-universities"),
  createdExample,
  words: {
    create: {
      summary: "Create a target group of the caller's team",
      description:
        "The body is a target group as in the config YAML (what GET returns is accepted back). It is stored in the data directory and can be validated against at once: 201 with `Location` and `ETag`. An id that exists already is 409, as is one more resource than `limits.resourcesPerTeam` allows."
    },
    list: {
      summary: "List the caller's team's target groups and the shared ones, ordered by id",
      description:
        "Groups from the config directory and those made through the API (`source`), `limit` at a time (default 50, at most 100); pass `nextCursor` as `cursor` for the next page."
    },
    get: {
      summary: "Read a target group",
      description:
        "The group as in the config YAML, every default of its criteria spelled out, and where it is defined. `ETag` is its version, for `If-Match` on a change."
    },
    update: {
      summary: "Change a target group (JSON merge patch)",
      description:
        "The body is a JSON merge patch (RFC 7396; `application/merge-patch+json` or `application/json`): the fields given replace the group's, `null` removes an optional one, objects such as `criteria` are merged member by member. The changed group is checked as a new one would be and serves at once; `id` and `team` cannot change. With `If-Match`, a change to a group that has changed since is 412. Groups defined in the config directory, and shared ones, are changed in git (409)."
    },
    delete: {
      summary: "Delete a target group",
      description:
        "Removes a group made through the API: 204. A group that offers still use is 409, naming them: change or delete those offers first. With `If-Match`, deleting a group that has changed since is 412. Groups defined in the config directory are removed in git (409)."
    }
  }
})

export class TargetGroupsApi extends HttpApiGroup.make("targetGroups")
  .add(
    targetGroupEndpoints.create,
    targetGroupEndpoints.list,
    targetGroupEndpoints.get,
    targetGroupEndpoints.update,
    targetGroupEndpoints.delete
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "Who qualifies: institutions by type, country and region, domain lists and patterns, and an email policy. A team's own groups and the shared ones."
    })
  )
  .middleware(Authorization) {}
