/**
 * What the offer and target-group endpoints share: where a resource is
 * defined, versions (`ETag` on reads, `If-Match` on writes), changes as
 * JSON merge patches (RFC 7396), and cursor pagination of the lists
 * (DESIGN.md: lists answer `{ data, nextCursor }`). Items are ordered by id; the cursor is opaque to
 * clients (the base64url of the last id of a page) and `nextCursor` is null
 * on the last page. Ordering by a unique, stable key means a page never
 * repeats or skips an item that existed on both requests.
 */
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from "./pageLimits.ts"
import {
  BadRequest,
  Conflict,
  InternalError,
  NotFound,
  PreconditionFailed,
  ServiceUnavailable,
  TooManyRequests
} from "./problems.ts"

/** Where a resource is defined: the config directory (read-only here) or the data directory (made through the API). */
export const ResourceSource = Schema.Literals(["config", "api"])
export type ResourceSource = typeof ResourceSource.Type

export { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX }

/**
 * `limit` as a query string carries it: digits, read as a whole number from
 * 1 to `maxLimit`; anything else (`limit=abc`, `limit=1.5`) is told so in
 * those words rather than a parser's.
 */
const limitOf = (maxLimit: number) => {
  const message = `limit is a whole number from 1 to ${maxLimit}`
  return Schema.String.pipe(
    Schema.check(Schema.isPattern(/^\d{1,9}$/, { message })),
    Schema.decodeTo(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: maxLimit }, { message }))), {
      decode: SchemaGetter.transform((text: string) => Number(text)),
      encode: SchemaGetter.transform((limit: number) => String(limit))
    })
  )
}

/** The query fields of a paged endpoint: `limit` (1 to `maxLimit`) and the opaque `cursor`. */
export const pageQueryFields = (maxLimit: number) => ({
  limit: Schema.optionalKey(limitOf(maxLimit)),
  cursor: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMaxLength(512))))
})

/** The query fields every list endpoint takes. */
export const PageQuery = pageQueryFields(PAGE_LIMIT_MAX)

/** One page of a list, named for the OpenAPI document (`OfferPage`). */
export const Page = <S extends Schema.Top>(item: S, identifier: string) =>
  Schema.Struct({
    data: Schema.Array(item),
    /** Pass it as `cursor` for the next page; null on the last page. */
    nextCursor: Schema.NullOr(Schema.String)
  }).annotate({ identifier })

/** A resource's version as an HTTP entity tag (RFC 9110): `"<version>"`, strong. */
export const ETag = Schema.String.pipe(
  Schema.annotate({
    description: "The resource's version. Send it back as If-Match to change or delete exactly this version."
  })
)

/** A read answers the resource and its version. */
export const Versioned = <S extends Schema.Top>(resource: S) => HttpApiSchema.WithHeaders(resource, { etag: ETag })

/** A create answers 201 with where the resource lives and its version. */
export const Created = <S extends Schema.Top>(resource: S) =>
  HttpApiSchema.WithHeaders(resource.pipe(HttpApiSchema.status(201)), {
    location: Schema.String.pipe(Schema.annotate({ description: "The new resource's path." })),
    etag: ETag
  })

/**
 * The version a write is based on. Optional: a write without it applies to
 * whatever is current; with it, a write to a resource that has changed since
 * (another ETag) is refused with 412 `PRECONDITION_FAILED`, so two people
 * cannot silently overwrite each other. `*` matches any version.
 */
export const IfMatchHeaders = Schema.Struct({
  "if-match": Schema.optionalKey(
    Schema.String.pipe(
      Schema.check(Schema.isMaxLength(1024)),
      Schema.annotate({
        description:
          'The ETag of the version read (e.g. `"Hk3…"`); the write is refused with 412 when the resource has changed since. Optional.'
      })
    )
  )
})

/** The media types a PATCH body may be sent as: a JSON merge patch (RFC 7396), or plain JSON read the same way. */
export const patchPayload = <S extends Schema.Top>(patch: S) =>
  [patch, patch.pipe(HttpApiSchema.asJson({ contentType: "application/merge-patch+json" }))] as const

/** A nested object of a merge patch: its members are merged into the resource's (null removes one). */
export const NestedPatch = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The problems a request that changes nothing answers: a read of a resource
 * or a list, a search, a validation (and what a write adds to).
 */
export const readErrors = [BadRequest, NotFound, TooManyRequests, ServiceUnavailable] as const
/** The problems a create answers: a new resource names nothing that could be missing or stale. */
export const resourceCreateErrors = [BadRequest, Conflict, TooManyRequests, InternalError, ServiceUnavailable] as const
/** The problems a change or a deletion answers. */
export const resourceWriteErrors = [
  BadRequest,
  NotFound,
  Conflict,
  PreconditionFailed,
  TooManyRequests,
  InternalError,
  ServiceUnavailable
] as const
