/**
 * What the offer and target-group handlers share: the problems they answer,
 * create, change and delete answered over `Resources`, versions as entity
 * tags (`ETag`, `If-Match`, `If-None-Match`) and cursor pagination over
 * items ordered by id; and the answer of a bulk validation, which the
 * validation and offer handlers share.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import { API_PREFIX } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import { type BadRequest, type NotFound, notFound as notFoundProblem, validationFailed } from "../../api/problems.ts"
import { PAGE_LIMIT_DEFAULT } from "../../api/resources.ts"
import type { Applied, ExpectedVersion } from "../../app/Resources.ts"
import type { ResourcesError } from "../../app/ResourcesError.ts"
import type { ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import { answerResourcesError } from "../problemOf.ts"
import { currentRequestId } from "../requestId.ts"
import { jsonBytesResponse } from "../resultJson.ts"

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

/** A resource as answered (its body and its tag), from the snapshot that serves it. */
type Answered<A, B> = (
  snapshot: ConfigSnapshot,
  resource: A
) => { readonly body: B; readonly headers: { readonly etag: string } }

/** The answer to a create for the caller's team: the new resource, at `API_PREFIX/<collection>/<id>`, with its tag. */
export const answerCreate = <A extends { readonly id: string }, B>(
  collection: string,
  create: (team: string) => Effect.Effect<Applied<A>, ResourcesError>,
  answered: Answered<A, B>
) =>
  Effect.flatMap(Caller, (caller) => create(caller.team)).pipe(
    Effect.map(({ snapshot, resource }) => {
      const { body, headers } = answered(snapshot, resource)
      return createdAnswer(`${API_PREFIX}/${collection}/${resource.id}`, body, headers.etag)
    }),
    Effect.catchTag("ResourcesError", answerCreateError)
  )

/** The caller's team's resource `id` that `find` sees in the snapshot in force, with that snapshot; another team's is 404. */
export const callersResource = <A>(
  snapshots: Snapshot["Service"],
  what: string,
  id: string,
  find: (engine: ConfigSnapshot["engine"], team: string, id: string) => A | undefined
) =>
  Effect.gen(function* () {
    const caller = yield* Caller
    let snapshot = snapshots.current()
    let resource = find(snapshot.engine, caller.team, id)
    if (resource === undefined) {
      // Perhaps written through another daemon a moment ago: catch up with the shared store, then look again.
      yield* snapshots.catchUp()
      snapshot = snapshots.current()
      resource = find(snapshot.engine, caller.team, id)
    }
    if (resource === undefined) return yield* notFound(what, id)
    return { snapshot, resource }
  })

/** The answer to a read of the caller's team's resource `id` (`callersResource`): the resource with its tag, or 304. */
export const answerGet = <A, B>(
  snapshots: Snapshot["Service"],
  what: string,
  id: string,
  find: (engine: ConfigSnapshot["engine"], team: string, id: string) => A | undefined,
  answered: Answered<A, B>
) =>
  Effect.flatMap(callersResource(snapshots, what, id, find), ({ snapshot, resource }) =>
    answerRead(answered(snapshot, resource))
  )

/**
 * A page of the resources the caller's team sees (`visible`), as answered
 * (`toResource`), those `keep` keeps, by id.
 */
export const answerList = <A, R extends { readonly id: string }>(
  snapshots: Snapshot["Service"],
  query: { readonly limit?: number; readonly cursor?: string },
  visible: (engine: ConfigSnapshot["engine"], team: string) => ReadonlyArray<A>,
  toResource: (snapshot: ConfigSnapshot, resource: A) => R,
  keep: (resource: R) => boolean = () => true
) =>
  Effect.gen(function* () {
    const caller = yield* Caller
    const snapshot = snapshots.current()
    const resources = visible(snapshot.engine, caller.team)
      .map((resource) => toResource(snapshot, resource))
      .filter(keep)
      .sort(byId)
    const page = paginate(resources, query)
    return "data" in page ? page : yield* page
  })

/** A change or deletion as requested: the resource's id, the versions `If-Match` names, the patch. */
interface WriteRequest<P> {
  readonly params: { readonly id: string }
  readonly headers: { readonly "if-match"?: string | undefined }
  readonly payload: P
}

/** The answer to a change for the caller's team based on the versions `If-Match` names: the changed resource with its tag. */
export const answerUpdate = <P, A, B>(
  request: WriteRequest<P>,
  update: (team: string, id: string, patch: P, expected?: ExpectedVersion) => Effect.Effect<Applied<A>, ResourcesError>,
  answered: Answered<A, B>
) =>
  Effect.flatMap(Caller, (caller) =>
    update(caller.team, request.params.id, request.payload, expectedVersion(request.headers["if-match"]))
  ).pipe(
    Effect.map(({ snapshot, resource }) => HttpApiSchema.withHeaders(answered(snapshot, resource))),
    Effect.catchTag("ResourcesError", answerResourcesError)
  )

/** The answer to a deletion for the caller's team based on the versions `If-Match` names: nothing. */
export const answerDelete = (
  request: Omit<WriteRequest<unknown>, "payload">,
  remove: (team: string, id: string, expected?: ExpectedVersion) => Effect.Effect<ConfigSnapshot, ResourcesError>
) =>
  Effect.flatMap(Caller, (caller) =>
    remove(caller.team, request.params.id, expectedVersion(request.headers["if-match"]))
  ).pipe(Effect.asVoid, Effect.catchTag("ResourcesError", answerResourcesError))

/**
 * A bulk validation's answer for the caller's team: the JSON bytes `answer`
 * writes for the request (within `limits.bulkMaxEmails` in force), or its problem.
 */
export const answerBulk = <P extends BadRequest | NotFound>(
  snapshots: Snapshot["Service"],
  answer: (team: string, bound: number, requestId: string) => Buffer | P
) =>
  Effect.gen(function* () {
    const requestId = yield* currentRequestId
    const caller = yield* Caller
    const bytes = answer(caller.team, snapshots.current().config.settings.limits.bulkMaxEmails, requestId)
    return bytes instanceof Uint8Array ? jsonBytesResponse(bytes) : yield* bytes
  })
