/**
 * Handlers of the institution endpoints, over the institutions service
 * (`app/Institutions.ts`): search over the index of the snapshot in force,
 * and the institution a domain belongs to. Pages are
 * cursor-paged like every list; the cursor holds the position in the
 * ranked matches (the ranking is fixed for a given index).
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { CampusgateApi } from "../../api/Api.ts"
import type { InstitutionSearchQuery } from "../../api/institutions.ts"
import { invalidField, notFound } from "../../api/problems.ts"
import { PAGE_LIMIT_DEFAULT } from "../../api/resources.ts"
import { Institutions, type InstitutionsService } from "../../app/Institutions.ts"
import { invalid } from "./shared.ts"

const encodeCursor = (offset: number): string => Buffer.from(`o:${offset}`, "utf8").toString("base64url")

const decodeCursor = (cursor: string): number | undefined => {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"))
  return match === null ? undefined : Number(match[1])
}

/** `GET /institutions`: a page of the ranked matches, from the offset its cursor holds. */
const searchInstitutions = (institutions: InstitutionsService, query: InstitutionSearchQuery) =>
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
    const page = institutions.search({ q: query.q, country: query.country, type: query.type, limit, offset })
    return {
      data: page.institutions,
      nextCursor: offset + limit < page.total ? encodeCursor(offset + limit) : null
    }
  })

/** `GET /institutions/{domain}`: the institution a domain belongs to, or why none. */
const institutionOf = (institutions: InstitutionsService, domain: string) =>
  Effect.gen(function* () {
    const found = institutions.lookup(domain)
    if (found.kind === "invalid") {
      return yield* invalidField(
        `"${domain}" is not a domain name or email address.`,
        "/path/domain",
        "INVALID_DOMAIN",
        "a host name such as ox.ac.uk"
      )
    }
    if (found.kind === "none") return yield* notFound(found.why)
    return found.match
  })

export const InstitutionsHandlers = HttpApiBuilder.group(CampusgateApi, "institutions", (handlers) =>
  Effect.map(Effect.service(Institutions), (institutions) =>
    handlers
      .handle("search", ({ query }) => searchInstitutions(institutions, query))
      .handle("get", ({ params }) => institutionOf(institutions, params.domain))
  )
)
