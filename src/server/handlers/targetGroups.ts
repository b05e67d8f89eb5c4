/**
 * Handlers of the target-group endpoints. A caller sees its team's groups
 * and the shared ones; another team's group is 404. A group created through
 * the API belongs to the caller's team, is written to the data directory
 * and can be validated against as soon as the answer arrives.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import type { TargetGroupResource } from "../../api/targetGroups.ts"
import { Resources, sourceOf } from "../../app/Resources.ts"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import { visibleTargetGroup, visibleTargetGroups } from "../../app/visibility.ts"
import type { TargetGroup } from "../../domain/TargetGroup.ts"
import { answerResourcesError } from "../problemOf.ts"
import { byId, notFound, paginate } from "./shared.ts"

const toResource = (snapshot: ConfigSnapshot, group: TargetGroup): TargetGroupResource => ({
  ...group,
  source: sourceOf(snapshot, "targetGroup", group.id)
})

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
          const applied = yield* resources.createTargetGroup(caller.team, fields)
          return toResource(applied.snapshot, applied.resource)
        }).pipe(
          // Creating names no existing resource, so the not-found reason cannot occur here.
          Effect.catchTag("ResourcesError", (error) =>
            Effect.catchTag(answerResourcesError(error), "NotFound", Effect.die)
          )
        )
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
          return toResource(snapshot, group)
        })
      )
  })
)
