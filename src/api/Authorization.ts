/**
 * Authentication and authorisation, as the contract declares them:
 * `Authorization: Bearer <key>`; the key's team and scopes become the
 * `Caller` of the request. Each endpoint names the scope it needs with the
 * `RequiredScope` annotation, so the scope table in the docs and the check
 * come from one place. The server implements the middleware
 * (`server/authorization.ts`); clients add the header.
 */
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import type { ApiKeyId, Scope } from "../domain/ApiKey.ts"
import { Forbidden, ServiceUnavailable, TooManyRequests, Unauthorized } from "./problems.ts"

/** Who is calling: the API key's id, team and scopes. */
export class Caller extends Context.Service<
  Caller,
  { readonly keyId: ApiKeyId; readonly team: string; readonly scopes: ReadonlySet<Scope> }
>()("campusgate/api/Caller") {}

/** The scope an endpoint needs (an endpoint annotation); a list means any one of them. */
export class RequiredScope extends Context.Service<RequiredScope, Scope | ReadonlyArray<Scope>>()(
  "campusgate/api/RequiredScope"
) {}

/** The scopes that each let a key call the endpoint (any one is enough). */
export const acceptedScopes = (required: Scope | ReadonlyArray<Scope>): ReadonlyArray<Scope> =>
  typeof required === "string" ? [required] : required

/** The scopes an endpoint accepts, from its annotations; empty when it needs none. */
export const scopesAcceptedBy = (annotations: Context.Context<never>): ReadonlyArray<Scope> => {
  const required = Context.getOrUndefined(annotations, RequiredScope)
  return required === undefined ? [] : acceptedScopes(required)
}

/** The scope rule: a key may call an endpoint when it carries one of the scopes the endpoint accepts. */
export const keyMayCall = (keyScopes: ReadonlyArray<Scope>, accepted: ReadonlyArray<Scope>): boolean =>
  accepted.length === 0 || accepted.some((scope) => keyScopes.includes(scope))

/** The name of the bearer scheme in the OpenAPI document. */
export const BEARER = "bearer"

/** The bearer scheme, with what the OpenAPI document says about it. */
const bearer = HttpApiSecurity.annotateMerge(
  HttpApiSecurity.bearer,
  OpenApi.annotations({
    description:
      "An API key: `Authorization: Bearer <key>`. A key belongs to a team and carries scopes; make one with `campusgate keys create`, or with a key that has `keys:write` (`POST /api/v1/keys`)."
  })
)

export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: Caller; requires: never }>()(
  "campusgate/api/Authorization",
  {
    requiredForClient: true,
    security: { [BEARER]: bearer },
    // Rate limits are applied right after the key is known: 429, or 503 when the limiter store is down.
    error: [Unauthorized, Forbidden, TooManyRequests, ServiceUnavailable]
  }
) {}
