/**
 * Handlers of the institution endpoints: search over the index of the
 * snapshot in force, and the institution a domain belongs to. Pages are
 * cursor-paged like every list; the cursor holds the position in the
 * ranked matches (the ranking is fixed for a given index).
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import { invalidField, notFound } from "../../api/problems.ts"
import { PAGE_LIMIT_DEFAULT } from "../../api/resources.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { nonInstitutionPhrase } from "../../domain/NonInstitution.ts"
import { hostOf, institutionOf } from "../../engine/institutionOf.ts"
import { InstitutionSearch } from "../../engine/institutions/InstitutionSearch.ts"
import type { EngineContext } from "../../engine/targeting/EngineContext.ts"
import { invalid } from "./shared.ts"

const encodeCursor = (offset: number): string => Buffer.from(`o:${offset}`, "utf8").toString("base64url")

const decodeCursor = (cursor: string): number | undefined => {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  return match === null ? undefined : Number(match[1])
}

/** Why a valid host has no institution, in a sentence. */
const whyNone = (context: EngineContext, host: string): string => {
  const match = context.index.lookup(host)
  if (match.kind === "non-institution") {
    const organization = match.entry.organization
    return `${host} belongs to ${organization.name ?? match.matchedDomain}, ${nonInstitutionPhrase[organization.kind]}, not an educational institution.`
  }
  if (match.kind === "deny")
    return `${host} is not an institution's domain (it is on the ${match.entry.source.dataset} stoplist).`
  return `${host} belongs to no known institution.`
}

export const InstitutionsHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "institutions",
  Effect.fn(function* (handlers) {
    const server = yield* Snapshot
    return handlers
      .handle("search", ({ query }) =>
        Effect.gen(function* () {
          let offset = 0
          if (query.cursor !== undefined) {
            const decoded = decodeCursor(query.cursor)
            if (decoded === undefined) {
              return yield* invalid("The cursor is not valid.", [
                {
                  field: "/query/cursor",
                  code: "INVALID_CURSOR",
                  message: "pass the nextCursor of a previous page as it was given"
                }
              ])
            }
            offset = decoded
          }
          const limit = query.limit ?? PAGE_LIMIT_DEFAULT
          const page = InstitutionSearch.of(server.current().engine.context.index).search({
            q: query.q,
            country: query.country,
            type: query.type,
            limit,
            offset
          })
          return {
            data: page.institutions,
            nextCursor: offset + limit < page.total ? encodeCursor(offset + limit) : null
          }
        })
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const context = server.current().engine.context
          const host = hostOf(params.domain)
          if (host === undefined) {
            return yield* invalidField(
              `"${params.domain}" is not a domain name or email address.`,
              "/path/domain",
              "INVALID_DOMAIN",
              "a host name such as ox.ac.uk"
            )
          }
          const match = institutionOf(context, host)
          if (match === undefined) return yield* notFound(whyNone(context, host))
          return match
        })
      )
  })
)
