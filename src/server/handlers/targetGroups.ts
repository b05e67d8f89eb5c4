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
import { CampusgateApi } from "../../api/Api.ts"
import type { TargetGroupResource } from "../../api/targetGroups.ts"
import { Resources, sourceOf, versionOf } from "../../app/Resources.ts"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import { visibleTargetGroup, visibleTargetGroups } from "../../app/visibility.ts"
import type { TargetGroup } from "../../domain/TargetGroup.ts"
import { answerCreate, answerDelete, answerGet, answerList, answerUpdate, entityTag } from "./shared.ts"

const toResource = (snapshot: ConfigSnapshot, group: TargetGroup): TargetGroupResource => ({
  ...group,
  source: sourceOf(snapshot, "targetGroup", group.id)
})

/** The group as answered, and its tag (its version). */
const answered = (snapshot: ConfigSnapshot, group: TargetGroup) => ({
  body: toResource(snapshot, group),
  headers: { etag: entityTag(versionOf("targetGroup", group)) }
})

/** The group `id` as `team` sees it. */
const findTargetGroup = (engine: ConfigSnapshot["engine"], team: string, id: string) =>
  visibleTargetGroup(engine, team, id)?.targetGroup

export const TargetGroupsHandlers = HttpApiBuilder.group(CampusgateApi, "targetGroups", (handlers) =>
  Effect.map(Effect.all([Effect.service(Snapshot), Effect.service(Resources)]), ([server, resources]) =>
    handlers
      .handle("create", ({ payload }) => {
        const { source: _source, ...fields } = payload
        return answerCreate("target-groups", (team) => resources.createTargetGroup(team, fields), answered)
      })
      .handle("list", ({ query }) => answerList(server, query, visibleTargetGroups, toResource))
      .handle("get", ({ params }) => answerGet(server, "target group", params.id, findTargetGroup, answered))
      .handle("update", (request) => answerUpdate(request, resources.updateTargetGroup, answered))
      .handle("delete", (request) => answerDelete(request, resources.deleteTargetGroup))
  )
)
