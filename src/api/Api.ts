/**
 * The HTTP contract, shared by the server and the typed client: every
 * endpoint under `/api/v1` (the server also answers `/v1`), its payload,
 * success and problem schemas, and the scope it needs.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as OpenApi from "effect/http-api/OpenApi"
import { InstitutionReviewsApi } from "./institutionReviews.ts"
import { InstitutionsApi } from "./institutions.ts"
import { JobsApi } from "./jobs.ts"
import { KeysApi } from "./keys.ts"
import { OffersApi } from "./offers.ts"
import { BadRequest } from "./problems.ts"
import { StatusApi } from "./status.ts"
import { TargetGroupsApi } from "./targetGroups.ts"
import { ValidationApi } from "./validation.ts"
import { VerificationsApi } from "./verifications.ts"

/**
 * Turns a request that fails decoding (malformed JSON, wrong types, unknown
 * fields) into a 400 problem with field-level errors; the server implements it.
 */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("campusgate/api/RequestErrors", {
  error: BadRequest
}) {}

/**
 * Names the request in every problem an endpoint answers (the id from
 * `X-Request-Id`, or the one the server made); outermost of the API's
 * middleware, so the problems of the others are named too. The server
 * implements it.
 */
export class RequestIds extends HttpApiMiddleware.Service<RequestIds>()("campusgate/api/RequestIds") {}

export const API_PREFIX = "/api/v1"

/** A request URL with the `/v1/...` alias spelled out as `/api/v1/...`. */
export const canonicalUrl = (url: string): string => (url === "/v1" || url.startsWith("/v1/") ? `/api${url}` : url)

export class CampusgateApi extends HttpApi.make("campusgate")
  .add(ValidationApi)
  .add(JobsApi)
  .add(OffersApi)
  .add(TargetGroupsApi)
  .add(InstitutionsApi)
  .add(InstitutionReviewsApi)
  .add(StatusApi)
  .add(KeysApi)
  .add(VerificationsApi)
  .middleware(RequestErrors)
  .middleware(RequestIds)
  .prefix(API_PREFIX)
  // Unknown fields are problems. Decoding stops at the first problem, so a hostile body costs one issue; the
  // server decodes a small body again to report every problem at once (server/requestErrors.ts).
  .annotate(HttpApi.PayloadParseOptions, { errors: "first", onExcessProperty: "error" })
  .annotateMerge(
    OpenApi.annotations({
      title: "Campusgate",
      version: "1",
      description:
        "Decides whether an email address belongs to the students and educators an offer is for. Errors are RFC 9457 problem details with `code` and `requestId`.\n\n" +
        "A shop proves that a person belongs to an offer's people in one of three ways, all ending in a token signed with the keys at `/.well-known/jwks.json`:\n\n" +
        "- **This API**: `POST /api/v1/verifications`, then confirm the code (or the link is opened); the shop builds its own screens.\n" +
        "- **The hosted page** `GET /verify/{offerId}?redirect_uri=…&state=…` (outside `/api/v1`, no API key): the daemon shows the forms and redirects back with the token; `/verify.js` opens it in a popup and hands the token to the page.\n" +
        "- **OpenID Connect**: discovery at `/.well-known/openid-configuration`, authorization code flow with PKCE; the ID token and userinfo carry the `campusgate_eligibility` claim."
    })
  ) {}

/** Every endpoint of the contract, with its full path (`/api/v1/...`). */
export const apiEndpoints = Object.values(CampusgateApi.groups).flatMap((group) => Object.values(group.endpoints))
