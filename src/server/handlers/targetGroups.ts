/**
 * Handlers of the target-group endpoints. A caller sees its team's groups
 * and the shared ones; another team's group is 404. A group created through
 * the API belongs to the caller's team, is written to the data directory
 * and can be validated against as soon as the answer arrives; it can be
 * changed (a merge patch) and deleted through `Resources`. Reads carry the
 * group's version as `ETag`; writes take `If-Match`.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import { API_PREFIX, CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import type { TargetGroupResource } from "../../api/targetGroups.ts"
import { Resources, sourceOf, versionOf } from "../../app/Resources.ts"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import { visibleTargetGroup, visibleTargetGroups } from "../../app/visibility.ts"
import type { TargetGroup } from "../../domain/TargetGroup.ts"
import { answerResourcesError } from "../problemOf.ts"
import {
  answerCreateError,
  answerRead,
  byId,
  createdAnswer,
  entityTag,
  expectedVersion,
  notFound,
  paginate
} from "./shared.ts"

const toResource = (snapshot: ConfigSnapshot, group: TargetGroup): TargetGroupResource => ({
  ...group,
  source: sourceOf(snapshot, "targetGroup", group.id)
})

/** The group as answered, and its tag (its version). */
const answered = (snapshot: ConfigSnapshot, group: TargetGroup) => ({
  body: toResource(snapshot, group),
  headers: { etag: entityTag(versionOf("targetGroup", group)) }
})

/** The group as answered, with its tag. */
const versioned = (snapshot: ConfigSnapshot, group: TargetGroup) => HttpApiSchema.withHeaders(answered(snapshot, group))

export const TargetGroupsHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "targetGroups",
  Effect.fn(function* (handlers) {
    const server = yield* Snapshot
    const resources = yield* Resources
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const { source: _source, ...fields } = payload
          const { snapshot, resource } = yield* resources.createTargetGroup(caller.team, fields)
          const location = `${API_PREFIX}/target-groups/${resource.id}`
          const { body, headers } = answered(snapshot, resource)
          return createdAnswer(location, body, headers.etag)
        }).pipe(Effect.catchTag("ResourcesError", answerCreateError))
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const snapshot = server.current()
          const groups = visibleTargetGroups(snapshot.engine, caller.team)
            .map((group) => toResource(snapshot, group))
            .sort(byId)
          const page = paginate(groups, query)
          return "data" in page ? page : yield* page
        })
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const snapshot = server.current()
          const group = visibleTargetGroup(snapshot.engine, caller.team, params.id)?.targetGroup
          if (group === undefined) {
            return yield* notFound("target group", params.id)
          }
          return yield* answerRead(answered(snapshot, group))
        })
      )
      .handle("update", ({ params, headers, payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const expected = expectedVersion(headers["if-match"])
          const { snapshot, resource } = yield* resources.updateTargetGroup(caller.team, params.id, payload, expected)
          return versioned(snapshot, resource)
        }).pipe(Effect.catchTag("ResourcesError", answerResourcesError))
      )
      .handle("delete", ({ params, headers }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          yield* resources.deleteTargetGroup(caller.team, params.id, expectedVersion(headers["if-match"]))
        }).pipe(Effect.catchTag("ResourcesError", answerResourcesError))
      )
  })
)
