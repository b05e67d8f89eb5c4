/**
 * What the offer and target-group handlers share: the problems they answer,
 * the answer to a create, versions as entity tags (`ETag`, `If-Match`, `If-None-Match`) and cursor pagination over
 * items ordered by id.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import { type BadRequest, type NotFound, notFound as notFoundProblem, validationFailed } from "../../api/problems.ts"
import { PAGE_LIMIT_DEFAULT } from "../../api/resources.ts"
import type { ExpectedVersion } from "../../app/Resources.ts"
import type { ResourcesError } from "../../app/ResourcesError.ts"
import { answerResourcesError } from "../problemOf.ts"

/**
 * A resource's representation as a strong entity tag (RFC 9110, 8.8.3):
 * its stored version, and what else of the answer changes without a write
 * (`variant`: an offer's effective status, which its window moves), after a
 * dot, which versions (base64url) never hold.
 */
export const entityTag = (version: string, variant?: string): string =>
  variant === undefined ? `"${version}"` : `"${version}.${variant}"`

/** The tags a header lists, weak ones marked. */
const tagsOf = (header: string) =>
  [...header.matchAll(/(W\/)?"([^"]*)"/g)].map((match) => ({ weak: match[1] !== undefined, tag: match[2]! }))

/**
 * The versions an `If-Match` header names (RFC 9110, 13.1.1): `*`, or a
 * list of entity tags. A weak tag never matches (If-Match compares
 * strongly), so it names no version; a tag's variant does not matter to a
 * write. Absent: no condition.
 */
export const expectedVersion = (ifMatch: string | undefined): ExpectedVersion | undefined => {
  if (ifMatch === undefined) return undefined
  if (ifMatch.trim() === "*") return "*"
  return tagsOf(ifMatch).flatMap(({ weak, tag }) => (weak ? [] : [tag.split(".")[0]!]))
}

/**
 * Whether `If-None-Match` names the representation `etag` answers (RFC
 * 9110, 13.1.2: weak comparison; `*` names any): the client's copy is
 * current, and a read answers 304 Not Modified.
 */
export const isCurrentCopy = (ifNoneMatch: string | undefined, etag: string): boolean => {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === "*") return true
  return tagsOf(ifNoneMatch).some(({ tag }) => `"${tag}"` === etag)
}

/**
 * A read's answer: the resource with its tag, or 304 Not Modified (the tag,
 * no body) when the request's `If-None-Match` names it.
 */
export const answerRead = <A>(answer: { readonly body: A; readonly headers: { readonly etag: string } }) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    isCurrentCopy(request.headers["if-none-match"], answer.headers.etag)
      ? HttpServerResponse.empty({ status: 304, headers: { etag: answer.headers.etag } })
      : HttpApiSchema.withHeaders(answer)
  )

/** The answer to a create: the new resource, where it lives (`Location`) and its tag (`ETag`). */
export const createdAnswer = <A>(location: string, body: A, etag: string) =>
  HttpApiSchema.withHeaders({ body, headers: { location, etag } })

/** A create's failure answered; a create names no existing resource, so not-found and stale cannot occur. */
export const answerCreateError = (error: ResourcesError) =>
  Effect.catchTags(answerResourcesError(error), { NotFound: Effect.die, PreconditionFailed: Effect.die })

export const notFound = (what: string, id: string): NotFound => notFoundProblem(`There is no ${what} "${id}".`)

export const invalid = validationFailed

const encodeCursor = (id: string): string => Buffer.from(id, "utf8").toString("base64url")

const decodeCursor = (cursor: string): string | undefined => {
  const id = Buffer.from(cursor, "base64url").toString("utf8")
  return id !== "" && encodeCursor(id) === cursor ? id : undefined
}

/** The page after `cursor` of items sorted by id, or the problem with the cursor. */
export const paginate = <A extends { readonly id: string }>(
  sorted: ReadonlyArray<A>,
  query: { readonly limit?: number; readonly cursor?: string }
): { readonly data: ReadonlyArray<A>; readonly nextCursor: string | null } | BadRequest => {
  const limit = query.limit ?? PAGE_LIMIT_DEFAULT
  let start = 0
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor)
    if (after === undefined) {
      return invalid("The cursor is not valid.", [
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
