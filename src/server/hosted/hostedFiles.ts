/**
 * The hosted page's files: its stylesheet and script (`hostedAssets.ts`),
 * and the offers' logos by content hash.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { notFound as notFoundProblem } from "../../api/problems.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import type { PageLogo } from "../../config/pageLogos.ts"
import { answerWith } from "../problemResponse.ts"
import { assetResponse, makeAsset, type StaticAsset } from "../staticAsset.ts"
import { hostedAssets } from "./hostedAssets.ts"
import { logoHash } from "./hostedExchange.ts"

const notFound = Effect.suspend(() => answerWith(notFoundProblem("The verification page has no such file.")))

export const asset = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { file } = yield* HttpRouter.params
  const { css, js } = hostedAssets()
  const found = file === "verify.css" ? css : file === "verify.js" ? js : undefined
  if (found === undefined) return yield* notFound
  return HttpServerResponse.setHeaders(assetResponse(found, request.headers), { "x-content-type-options": "nosniff" })
})

const logoAssets = new WeakMap<PageLogo, StaticAsset>()

/** A logo by its content hash; an SVG cannot run script (a sandboxing CSP, and `<img>` never runs it anyway). */
export const logo = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { file } = yield* HttpRouter.params
  const snapshot = (yield* Snapshot).current()
  const found = [...(snapshot.config.pageLogos?.values() ?? [])].find((each) => logoHash(each) === file)
  if (found === undefined) return yield* notFound
  let made = logoAssets.get(found)
  if (made === undefined) {
    made = makeAsset(found.bytes, {
      contentType: found.contentType,
      cacheControl: "public, max-age=31536000, immutable"
    })
    logoAssets.set(found, made)
  }
  return HttpServerResponse.setHeaders(assetResponse(made, request.headers), {
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox"
  })
})
