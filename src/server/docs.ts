/**
 * The API's documentation as a browser gets it: `GET /` redirects to
 * `/docs`, the interactive reference (Scalar), which loads its script from
 * this daemon (`/docs/scalar.js`, built from the npm package) and the
 * OpenAPI document from `/openapi.json` — nothing from another host: no
 * fonts, no scripts, no telemetry, no cloud buttons (Share, Generate SDKs,
 * the AI agent). The bearer scheme is selected, so every generated snippet
 * sends `Authorization: Bearer …`.
 *
 * The page is served with a strict Content Security Policy (`DOCS_CSP`) and
 * may not be framed. Every asset is compressed and cacheable (`staticAsset.ts`): the script's
 * URL carries its content hash and is cached for a year (`immutable`); the
 * page and the OpenAPI document are revalidated (`no-cache`, `ETag`), so a
 * new build or a changed bound shows at once.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { openApiDocument } from "../api/openApiDocument.ts"
import { notBuilt as notBuiltProblem } from "../api/problems.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { readScalarBundle } from "./docsAssets.ts"
import { answerWith } from "./problemResponse.ts"
import { DOCS_PATH, DOCS_SCRIPT_PATH, OPENAPI_PATH, ROOT_PATH } from "./routes.ts"
import { assetResponse, makeAsset, type StaticAsset } from "./staticAsset.ts"

const REVALIDATE = "no-cache"
const IMMUTABLE = "public, max-age=31536000, immutable"

/**
 * What Scalar is told (its configuration reference): the document's URL,
 * the bearer scheme preselected, curl first, and every feature that talks
 * to Scalar's cloud or loads from another host switched off.
 */
const scalarConfiguration = {
  url: OPENAPI_PATH,
  authentication: { preferredSecurityScheme: "bearer" },
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  withDefaultFonts: false,
  showDeveloperTools: "never",
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  hideClientButton: true,
  // Every operation on the page, with its snippet: a reader scrolls or searches, never unfolds a tag first.
  defaultOpenAllTags: true,
  documentDownloadType: "json",
  theme: "default"
}

/** `<`-escaped JSON, safe inside a `<script>` element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replaceAll("<", "\\u003c")

const INLINE_STYLE =
  "body { margin: 0; font-family: system-ui, sans-serif; } code, pre { font-family: ui-monospace, monospace; }"
const INLINE_SCRIPT = `Scalar.createApiReference("#reference", ${scriptJson(scalarConfiguration)})`

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

/**
 * The page's Content Security Policy: scripts from this daemon and the one
 * inline script by its hash, requests to this daemon only (the document,
 * "try it"), no frames around it (clickjacking), no plugins, no base or
 * form elsewhere. Styles may be inline: the reference sets its styles from
 * its script.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  `script-src 'self' ${sha256(INLINE_SCRIPT)}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

/** The header fields of the page beside its caching: the policy, and neither sniffing nor referrers. */
const pageHeaders = {
  "content-security-policy": DOCS_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

// The container is not `#api-reference`: the bundle mounts a second reference, with its defaults (outside
// fonts, the AI agent), on an element of that id by itself.
const page = (scriptVersion: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Campusgate API</title>
    <meta name="description" content="The Campusgate HTTP API: validate emails against target groups and offers, jobs, resources, verifications." />
    <link rel="icon" href="data:," />
    <style>${INLINE_STYLE}</style>
  </head>
  <body>
    <div id="reference"></div>
    <script src="${DOCS_SCRIPT_PATH}?v=${scriptVersion}"></script>
    <script>${INLINE_SCRIPT}</script>
  </body>
</html>
`

interface DocsAssets {
  readonly script: StaticAsset
  readonly page: StaticAsset
}

let assets: DocsAssets | undefined | null = null
/** The script and the page, read once; undefined when the build has not made the script. */
const docsAssets = (): DocsAssets | undefined => {
  if (assets === null) {
    const script = readScalarBundle(IMMUTABLE)
    assets =
      script === undefined
        ? undefined
        : {
            script,
            page: makeAsset(page(script.hash), { contentType: "text/html; charset=utf-8", cacheControl: REVALIDATE })
          }
  }
  return assets
}

const notBuilt = answerWith(notBuiltProblem("The docs page's script has not been built: run `npm run build`."))

const serve = (pick: (assets: DocsAssets, url: URL) => { asset: StaticAsset; cacheControl?: string }) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const built = docsAssets()
    if (built === undefined) return yield* notBuilt
    const { asset, cacheControl } = pick(built, new URL(request.url, "http://localhost"))
    return assetResponse(asset, request.headers, cacheControl)
  })

const openApiAssets = new Map<number, StaticAsset>()
/** The OpenAPI document for a bound, encoded and compressed once. */
const openApiAsset = (bulkMaxEmails: number): StaticAsset => {
  let asset = openApiAssets.get(bulkMaxEmails)
  if (asset === undefined) {
    asset = makeAsset(JSON.stringify(openApiDocument(bulkMaxEmails)), {
      contentType: "application/json",
      cacheControl: REVALIDATE
    })
    openApiAssets.set(bulkMaxEmails, asset)
  }
  return asset
}

export const DocsRoutes = Layer.mergeAll(
  HttpRouter.add("GET", ROOT_PATH, Effect.succeed(HttpServerResponse.redirect(DOCS_PATH, { status: 302 }))),
  HttpRouter.add(
    "GET",
    DOCS_PATH,
    Effect.map(
      serve((built) => ({ asset: built.page })),
      (response) => (response.status < 400 ? HttpServerResponse.setHeaders(response, pageHeaders) : response)
    )
  ),
  // Cached for good only under the URL the page names (its hash); any other is revalidated.
  HttpRouter.add(
    "GET",
    DOCS_SCRIPT_PATH,
    serve((built, url) => ({
      asset: built.script,
      ...(url.searchParams.get("v") === built.script.hash ? {} : { cacheControl: REVALIDATE })
    }))
  ),
  HttpRouter.add(
    "GET",
    OPENAPI_PATH,
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const snapshot = yield* Snapshot
      return assetResponse(openApiAsset(snapshot.current().config.settings.limits.bulkMaxEmails), request.headers)
    })
  )
)
