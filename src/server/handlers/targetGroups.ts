/**
 * Handlers of the target-group endpoints. A caller sees its team's groups
 * and the shared ones; another team's group is 404. A group created through
 * the API belongs to the caller's team, is written to the data directory
 * and can be validated against as soon as the answer arrives.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Result from "effect/Result"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import type { BadRequest, Conflict, InternalError } from "../../api/problems.ts"
import type { CreateTargetGroupRequest, TargetGroupResource } from "../../api/targetGroups.ts"
import type { ConfigSnapshot } from "../../app/Snapshot.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { visibleTargetGroup, visibleTargetGroups } from "../../app/visibility.ts"
import type { TeamId } from "../../domain/Identifiers.ts"
import type { TargetGroup } from "../../domain/TargetGroup.ts"
import { saveTargetGroup } from "../../store/resourceFiles.ts"
import { currentRequestId } from "../requestId.ts"
import { orStoreUnavailable } from "../storeUnavailable.ts"
import { byId, conflict, idTaken, invalid, notFound, paginate, sourceOf, writeResource } from "./resources.ts"

const toResource = (snapshot: ConfigSnapshot, group: TargetGroup): TargetGroupResource => ({
  ...group,
  source: sourceOf(snapshot.config, "targetGroup", group.id)
})

const createTargetGroup = (
  server: Snapshot["Service"],
  team: string,
  payload: CreateTargetGroupRequest,
  requestId: string
): Result.Result<TargetGroupResource, BadRequest | Conflict | InternalError> => {
  if (payload.team !== undefined && payload.team !== team) {
    return Result.fail(
      invalid(requestId, "The target group is not valid.", [
        {
          field: "/team",
          code: "WRONG_TEAM",
          message: `this API key creates target groups of team "${team}" only; leave team out or set it to "${team}"`
        }
      ])
    )
  }
  const taken = idTaken(server.current().config, "targetGroup", payload.id)
  if (taken !== undefined) return Result.fail(conflict(requestId, taken))
  const { source: _source, ...fields } = payload
  const group: TargetGroup = { ...fields, team: team as TeamId }
  const failed = writeResource(server, "targetGroup", group.id, (dataDir) => saveTargetGroup(dataDir, group), requestId)
  return failed === undefined ? Result.succeed(toResource(server.current(), group)) : Result.fail(failed)
}

export const TargetGroupsHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "targetGroups",
  Effect.fn(function* (handlers) {
    const server = yield* Snapshot
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          return yield* Effect.fromResult(createTargetGroup(server, caller.team, payload, requestId))
        }).pipe(orStoreUnavailable)
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          const snapshot = server.current()
          const groups = visibleTargetGroups(snapshot.engine, caller.team)
            .map((group) => toResource(snapshot, group))
            .sort(byId)
          const page = paginate(groups, query, requestId)
          return "data" in page ? page : yield* page
        })
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          const snapshot = server.current()
          const group = visibleTargetGroup(snapshot.engine, caller.team, params.id)?.targetGroup
          if (group === undefined) {
            return yield* notFound("target group", params.id, requestId)
          }
          return toResource(snapshot, group)
        })
      )
  })
)
