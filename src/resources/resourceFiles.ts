/**
 * The file adapter's layout: API-created resources in the data directory,
 * one YAML file per resource named after its id, in exactly the layout of
 * the config directory (`target-groups/`, `offers/`), so a resource can be
 * promoted into git by moving its file. Writes are atomic and durable
 * (`store/atomicWrite.ts`); hidden and temporary files are never listed.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { basename, extname, join } from "node:path"
import { isResourceFile, OFFERS_DIR, TARGET_GROUPS_DIR } from "../config/layout.ts"
import { removeFileDurably, writeFileAtomic } from "../store/atomicWrite.ts"
import type { ResourceDocument, ResourceKind } from "./ResourceDocument.ts"

const directories: Record<ResourceKind, string> = { targetGroup: TARGET_GROUPS_DIR, offer: OFFERS_DIR }

/** The data-directory file of a resource. */
export const resourcePath = (dataDir: string, kind: ResourceKind, id: string): string =>
  join(dataDir, directories[kind], `${id}.yaml`)

const notFound = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === "ENOENT"

/** Every resource file of a kind, in name order; an absent directory holds none. */
export const listResourceFiles = (dataDir: string, kind: ResourceKind): Array<ResourceDocument> => {
  const directory = join(dataDir, directories[kind])
  let names: Array<string>
  try {
    if (!statSync(directory).isDirectory()) return []
    names = readdirSync(directory)
  } catch (error) {
    if (notFound(error)) return []
    throw error
  }
  return names
    .filter(isResourceFile)
    .sort()
    .map((name) => {
      const location = join(directory, name)
      return { kind, id: basename(name, extname(name)), location, text: readFileSync(location, "utf8") }
    })
}

export const readResourceFile = (dataDir: string, kind: ResourceKind, id: string): ResourceDocument | undefined => {
  const location = resourcePath(dataDir, kind, id)
  try {
    return { kind, id, location, text: readFileSync(location, "utf8") }
  } catch (error) {
    if (notFound(error)) return undefined
    throw error
  }
}

export const writeResourceFile = (dataDir: string, kind: ResourceKind, id: string, text: string): void =>
  writeFileAtomic(resourcePath(dataDir, kind, id), text)

export const removeResourceFile = (dataDir: string, kind: ResourceKind, id: string): void =>
  removeFileDurably(resourcePath(dataDir, kind, id))
