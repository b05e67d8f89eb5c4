/**
 * Request ids: an inbound `X-Request-Id` is kept when it is sane (1-128
 * characters from a safe set, so it can go into logs and headers as is,
 * and no API key: a client that sends its key there by mistake must not
 * get it logged), otherwise one is generated. The server's outermost
 * middleware puts the id on the request, so everything downstream reads it
 * from there.
 */
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { API_KEY_PREFIX } from "../keys/apiKeys.ts"

export const REQUEST_ID_HEADER = "x-request-id"

const sane = /^[A-Za-z0-9._:/+=-]{1,128}$/

export const requestIdFor = (inbound: string | undefined): string =>
  inbound !== undefined && sane.test(inbound) && !inbound.includes(API_KEY_PREFIX) ? inbound : randomUUID()

/** The API key id of each request being served, noted by the authorisation middleware for the log line. */
export const requestKeyIds = new WeakMap<HttpServerRequest.HttpServerRequest, string>()

/** The id of the request being served. */
export const currentRequestId: Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  Effect.service(HttpServerRequest.HttpServerRequest),
  (request) => request.headers[REQUEST_ID_HEADER] ?? ""
)
