/**
 * What the offer and target-group endpoints share: where a resource is
 * defined, and cursor pagination of the lists (DESIGN.md: lists answer
 * `{ data, nextCursor }`). Items are ordered by id; the cursor is opaque to
 * clients (the base64url of the last id of a page) and `nextCursor` is null
 * on the last page. Ordering by a unique, stable key means a page never
 * repeats or skips an item that existed on both requests.
 */
import * as Schema from "effect/Schema"

/** Where a resource is defined: the config directory (read-only here) or the data directory (made through the API). */
export const ResourceSource = Schema.Literals(["config", "api"])
export type ResourceSource = typeof ResourceSource.Type

export const PAGE_LIMIT_DEFAULT = 50
export const PAGE_LIMIT_MAX = 100

/** The query fields of a paged endpoint: `limit` (1 to `maxLimit`) and the opaque `cursor`. */
export const pageQueryFields = (maxLimit: number) => ({
  limit: Schema.optionalKey(
    Schema.Int.pipe(
      Schema.check(
        Schema.isBetween(
          { minimum: 1, maximum: maxLimit },
          { message: `limit is a whole number from 1 to ${maxLimit}` }
        )
      )
    )
  ),
  cursor: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMaxLength(512))))
})

/** The query fields every list endpoint takes. */
export const PageQuery = pageQueryFields(PAGE_LIMIT_MAX)

/** One page of a list. */
export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    data: Schema.Array(item),
    /** Pass it as `cursor` for the next page; null on the last page. */
    nextCursor: Schema.NullOr(Schema.String)
  })
