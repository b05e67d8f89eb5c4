/**
 * The typed HTTP client (`campusgate/client`): generated from the same
 * `CampusgateApi` contract the daemon serves, so requests and answers are
 * checked at compile time and decoded at run time. Every problem the API
 * answers (`NotFound`, `BadRequest`, `Unauthorized`, `TooManyRequests`, ...)
 * arrives as a typed failure with its `code`, `detail` and `requestId`.
 *
 * ```ts
 * const client = yield* makeCampusgateClient({ baseUrl: "http://localhost:8080", apiKey })
 * const result = yield* client.validation.targetGroup({ payload: { email, targetGroupId: "uk-students" } })
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import { CampusgateApi } from "./Api.ts"
import { Authorization } from "./Authorization.ts"

export { API_PREFIX, CampusgateApi } from "./Api.ts"
export {
  BadRequest,
  Conflict,
  FieldError,
  Forbidden,
  Gone,
  InternalError,
  isProblem,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  PreconditionFailed,
  type Problem,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  UnsupportedMediaType
} from "./problems.ts"

export interface CampusgateClientOptions {
  /** Where the daemon listens, e.g. `http://localhost:8080` (the `/api/v1` prefix is added by the client). */
  readonly baseUrl: string | URL
  /** The API key, sent as `Authorization: Bearer <key>` on every request. */
  readonly apiKey: string | Redacted.Redacted<string>
}

/** The client: one method per endpoint, grouped as the contract groups them (`client.validation.targetGroup`). */
export type CampusgateClient = HttpApiClient.ForApi<typeof CampusgateApi>

/** The client side of the `Authorization` middleware: adds the bearer key to each request. */
export const layerAuthorization = (apiKey: string | Redacted.Redacted<string>) =>
  HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
    next(HttpClientRequest.bearerToken(request, apiKey))
  )

/** Makes a client for one daemon and API key, using `fetch`. Needs nothing else. */
export const makeCampusgateClient = (options: CampusgateClientOptions): Effect.Effect<CampusgateClient> =>
  HttpApiClient.make(CampusgateApi, { baseUrl: options.baseUrl }).pipe(
    Effect.provide(Layer.merge(layerAuthorization(options.apiKey), FetchHttpClient.layer))
  )

/** The client as a service, for applications that compose layers. */
export class Campusgate extends Context.Service<Campusgate, CampusgateClient>()("campusgate/client/Campusgate") {
  static readonly layer = (options: CampusgateClientOptions): Layer.Layer<Campusgate> =>
    Layer.effect(Campusgate, makeCampusgateClient(options))
}
