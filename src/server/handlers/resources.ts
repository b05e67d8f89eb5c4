/**
 * What the offer and target-group handlers share: the problems they answer,
 * cursor pagination over items ordered by id, where a resource is defined,
 * and the write path of an API-created resource.
 *
 * A write replaces one data-directory file and reloads the live config
 * before the answer, so the resource serves at once. If the reload rejects
 * the result, the file goes back to what it was and the config is reloaded
 * again: nothing is half-applied. The handlers check everything the config
 * loader checks first, so a rejection means something unexpected (another
 * broken file, a failing disk) and is a 500. Check, write and reload run
 * without yielding, so two writes never interleave in one process.
 */
import { existsSync, readFileSync } from "node:fs"
import { BadRequest, Conflict, type FieldError, InternalError, NotFound } from "../../api/problems.ts"
import { PAGE_LIMIT_DEFAULT, type ResourceSource } from "../../api/resources.ts"
import type { Snapshot } from "../../app/Snapshot.ts"
import { directoriesOf, type LoadedConfig } from "../../config/loadConfig.ts"
import { writeFileAtomic } from "../../store/atomicWrite.ts"
import { type ResourceKind, removeResource, resourcePath } from "../../store/resourceFiles.ts"

export const notFound = (what: string, id: string, requestId: string) =>
  new NotFound({ code: "NOT_FOUND", detail: `There is no ${what} "${id}".`, requestId })

export const invalid = (requestId: string, detail: string, errors: ReadonlyArray<FieldError>) =>
  new BadRequest({ code: "VALIDATION_ERROR", detail, requestId, errors })

export const conflict = (requestId: string, detail: string) => new Conflict({ code: "CONFLICT", detail, requestId })

const encodeCursor = (id: string): string => Buffer.from(id, "utf8").toString("base64url")

const decodeCursor = (cursor: string): string | undefined => {
  const id = Buffer.from(cursor, "base64url").toString("utf8")
  return id !== "" && encodeCursor(id) === cursor ? id : undefined
}

/** The page after `cursor` of items sorted by id, or the problem with the cursor. */
export const paginate = <A extends { readonly id: string }>(
  sorted: ReadonlyArray<A>,
  query: { readonly limit?: number; readonly cursor?: string },
  requestId: string
): { readonly data: ReadonlyArray<A>; readonly nextCursor: string | null } | BadRequest => {
  const limit = query.limit ?? PAGE_LIMIT_DEFAULT
  let start = 0
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor)
    if (after === undefined) {
      return invalid(requestId, "The cursor is not valid.", [
        {
          field: "/query/cursor",
          code: "INVALID_CURSOR",
          message: "pass the nextCursor of a previous page as it was given"
        }
      ])
    }
    while (start < sorted.length && sorted[start]!.id <= after) start++
  }
  const data = sorted.slice(start, start + limit)
  const more = start + limit < sorted.length
  return { data, nextCursor: more ? encodeCursor(data[data.length - 1]!.id) : null }
}

export const byId = (a: { readonly id: string }, b: { readonly id: string }): number =>
  a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/** Where a resource is defined: `config` (read-only through the API) or `api` (the data directory). */
export const sourceOf = (config: LoadedConfig, kind: ResourceKind, id: string): ResourceSource => {
  const origin = (kind === "targetGroup" ? config.origins.targetGroups : config.origins.offers).get(id)
  return origin?.store === "config" ? "config" : "api"
}

/** Why a new resource cannot take `id`, or undefined when it is free (in both directories, even in a broken file). */
export const idTaken = (config: LoadedConfig, kind: ResourceKind, id: string): string | undefined => {
  const what = kind === "targetGroup" ? "target group" : "offer"
  const origin = (kind === "targetGroup" ? config.origins.targetGroups : config.origins.offers).get(id)
  if (origin?.store === "config") {
    return `A ${what} "${id}" is already defined in the config directory; choose another id.`
  }
  if (origin !== undefined || existsSync(resourcePath(directoriesOf(config).dataDir, kind, id))) {
    return `A ${what} "${id}" already exists; choose another id.`
  }
  return undefined
}

/**
 * Writes a resource's data-directory file with `save` and reloads the
 * config; on a rejected reload restores the file as it was. Returns the
 * problem to answer, or undefined when the change serves.
 */
export const writeResource = (
  server: Snapshot["Service"],
  kind: ResourceKind,
  id: string,
  save: (dataDir: string) => void,
  requestId: string
): InternalError | undefined => {
  const { dataDir } = directoriesOf(server.current().config)
  const path = resourcePath(dataDir, kind, id)
  const before = existsSync(path) ? readFileSync(path, "utf8") : undefined
  save(dataDir)
  const outcome = server.reload()
  if (outcome.ok) return undefined
  if (before === undefined) removeResource(dataDir, kind, id)
  else writeFileAtomic(path, before)
  server.reload()
  return new InternalError({
    code: "SERVICE_ERROR",
    detail: "The change could not be applied, so nothing was changed; the server log says why.",
    requestId
  })
}
