/**
 * Target groups and offers created through the API, stored in the data
 * directory in exactly the format of the config directory (one YAML file
 * per resource, named after its id), so a resource can be promoted into git
 * by moving its file. Writes are atomic and durable (`atomicWrite.ts`).
 * Resources defined in the config directory are read-only through the API:
 * `isApiWritable` tells which are which.
 */
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { stringify } from "yaml"
import { OFFERS_DIR, TARGET_GROUPS_DIR } from "../config/layout.ts"
import type { LoadedConfig } from "../config/loadConfig.ts"
import { Offer } from "../domain/Offer.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"
import { removeFileDurably, writeFileAtomic } from "./atomicWrite.ts"

export type ResourceKind = "targetGroup" | "offer"

const directories: Record<ResourceKind, string> = { targetGroup: TARGET_GROUPS_DIR, offer: OFFERS_DIR }

const header = (kind: ResourceKind): string =>
  `# Created through the Campusgate API. To manage it in git, move this file into the config directory's ${directories[kind]}/.\n`

/** The data-directory file of a resource. */
export const resourcePath = (dataDir: string, kind: ResourceKind, id: string): string =>
  join(dataDir, directories[kind], `${id}.yaml`)

const encodeTargetGroup = Schema.encodeSync(TargetGroup)
const encodeOffer = Schema.encodeSync(Offer)

/** Writes (or replaces) an API-created target group. */
export const saveTargetGroup = (dataDir: string, group: TargetGroup): string => {
  const path = resourcePath(dataDir, "targetGroup", group.id)
  writeFileAtomic(path, header("targetGroup") + stringify(encodeTargetGroup(group)))
  return path
}

/** Writes (or replaces) an API-created offer. */
export const saveOffer = (dataDir: string, offer: Offer): string => {
  const path = resourcePath(dataDir, "offer", offer.id)
  writeFileAtomic(path, header("offer") + stringify(encodeOffer(offer)))
  return path
}

export const removeResource = (dataDir: string, kind: ResourceKind, id: string): void =>
  removeFileDurably(resourcePath(dataDir, kind, id))

/** Whether the API may change a resource: only those stored in the data directory (or not existing yet). */
export const isApiWritable = (config: LoadedConfig, kind: ResourceKind, id: string): boolean => {
  const origin = (kind === "targetGroup" ? config.origins.targetGroups : config.origins.offers).get(id)
  return origin === undefined || origin.store === "data"
}
