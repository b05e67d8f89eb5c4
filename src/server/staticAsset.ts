/**
 * Assets the daemon serves beside the API (the docs page, its script, the
 * OpenAPI document) as a browser and a proxy expect: compressed when the
 * client accepts it (`br`, else `gzip`; RFC 9110 `Accept-Encoding` with
 * q-values, `q=0` refused), with `Vary: Accept-Encoding`, a strong `ETag`
 * per representation and `304 Not Modified` for a matching
 * `If-None-Match`, and the `Cache-Control` the asset chooses. Bodies are
 * compressed once, when the asset is made, never per request.
 */
import { createHash } from "node:crypto"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

export type ContentCoding = "br" | "gzip" | "identity"

export interface StaticAsset {
  readonly contentType: string
  readonly cacheControl: string
  /** The content's hash, base64url: the entity tag's stem and a cache-busting version for URLs. */
  readonly hash: string
  readonly bodies: { readonly identity: Uint8Array } & Partial<Record<"br" | "gzip", Uint8Array>>
}

export const contentHash = (bytes: Uint8Array): string =>
  createHash("sha256").update(bytes).digest("base64url").slice(0, 22)

/** An asset compressed here, once: for the small page and the OpenAPI document (milliseconds). */
export const makeAsset = (
  body: Uint8Array | string,
  options: { readonly contentType: string; readonly cacheControl: string }
): StaticAsset => {
  const identity = typeof body === "string" ? Buffer.from(body) : body
  return {
    ...options,
    hash: contentHash(identity),
    bodies: {
      identity,
      gzip: gzipSync(identity, { level: 9 }),
      br: brotliCompressSync(identity, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length }
      })
    }
  }
}

/** The q-value the client gives `coding` (RFC 9110, 12.5.3); undefined when it names neither it nor `*`. */
const qualityOf = (accepted: ReadonlyArray<readonly [string, number]>, coding: string): number | undefined =>
  accepted.find(([name]) => name === coding)?.[1] ?? accepted.find(([name]) => name === "*")?.[1]

/** The representation to send: `br`, else `gzip`, else the identity, among those the client accepts and the asset has. */
export const chooseCoding = (acceptEncoding: string | undefined, asset: StaticAsset): ContentCoding =>
  negotiateCoding(
    acceptEncoding,
    (["br", "gzip"] as const).filter((coding) => asset.bodies[coding] !== undefined)
  )

/** The first of `available` (in the server's order of preference) the client accepts, else the identity. */
export const negotiateCoding = (
  acceptEncoding: string | undefined,
  available: ReadonlyArray<"br" | "gzip">
): ContentCoding => {
  const accepted = (acceptEncoding ?? "")
    .split(",")
    .map((part) => {
      const [name = "", ...parameters] = part.trim().toLowerCase().split(";")
      const q = parameters.map((p) => p.trim()).find((p) => p.startsWith("q="))
      return [name.trim(), q === undefined ? 1 : Number(q.slice(2)) || 0] as const
    })
    .filter(([name]) => name !== "")
  for (const coding of available) {
    const q = qualityOf(accepted, coding)
    if (q !== undefined && q > 0) return coding
  }
  return "identity"
}

const entityTag = (asset: StaticAsset, coding: ContentCoding) =>
  `"${asset.hash}${coding === "identity" ? "" : `-${coding}`}"`

/** Whether `If-None-Match` names `tag` (weak comparison, RFC 9110 13.1.2). */
const notModified = (ifNoneMatch: string | undefined, tag: string): boolean =>
  ifNoneMatch !== undefined &&
  (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((each) => each.trim().replace(/^W\//, "") === tag))

/** The asset as the response to a GET with these request headers. */
export const assetResponse = (
  asset: StaticAsset,
  headers: Readonly<Record<string, string | undefined>>,
  cacheControl = asset.cacheControl
): HttpServerResponse.HttpServerResponse => {
  const coding = chooseCoding(headers["accept-encoding"], asset)
  const tag = entityTag(asset, coding)
  const common = { etag: tag, "cache-control": cacheControl, vary: "accept-encoding" }
  if (notModified(headers["if-none-match"], tag)) return HttpServerResponse.empty({ status: 304, headers: common })
  return HttpServerResponse.uint8Array(asset.bodies[coding]!, {
    contentType: asset.contentType,
    headers: coding === "identity" ? common : { ...common, "content-encoding": coding }
  })
}
