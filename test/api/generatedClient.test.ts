/**
 * The OpenAPI document makes a working client: a generator from the npm
 * registry (swagger-typescript-api, fetch-based) is run on the document the
 * daemon serves, a small program making three calls with the generated
 * client is type-checked with the project's own `tsc` against the
 * generated types (so a missing or wrongly typed schema fails here), then
 * run against the daemon, and its answers checked.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { generateApi } from "swagger-typescript-api"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { copyConfig, type Daemon, makeKey, startDaemon } from "../server/daemon.ts"

const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url))

let daemon: Daemon
let key: string

beforeAll(async () => {
  const dirs = copyConfig()
  key = makeKey(dirs, "acme", allScopes)
  daemon = await startDaemon(dirs)
}, 30_000)

afterAll(async () => {
  await daemon?.stop()
})

// Typed by the generated declarations: a field the document gets wrong is a type error before anything runs.
const program = `import { Api, type Offer, type OfferPage, type ValidationResult } from "./api.ts"

declare const process: { readonly env: Record<string, string | undefined> }

const api = new Api({
  baseUrl: process.env.CAMPUSGATE_URL!,
  baseApiParams: { headers: { Authorization: \`Bearer \${process.env.CAMPUSGATE_API_KEY!}\` } }
})
const validation = await api.api.validationTargetGroup({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })
const result: ValidationResult = validation.data
const listed = await api.api.offersList({ limit: 10 })
const page: OfferPage = listed.data
const read = await api.api.offersGet("acme-student-discount")
const offer: Offer = read.data
console.log(
  JSON.stringify({
    isValid: result.isValid,
    matchedDomain: result.matchedDomain,
    offers: page.data.map((item) => item.id),
    offer: { id: offer.id, effectiveStatus: offer.effectiveStatus, team: offer.team },
    etag: read.headers.get("etag")
  })
)
`

describe("a client generated from the OpenAPI document", () => {
  it("type-checks against the generated types and makes three calls that answer as the daemon does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-generated-client-"))
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json()
    await generateApi({
      spec: document,
      output: dir,
      fileName: "api.ts",
      httpClientType: "fetch",
      enumStyle: "union",
      silent: true
    })
    writeFileSync(join(dir, "main.ts"), program)
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "es2024",
          module: "nodenext",
          moduleResolution: "nodenext",
          allowImportingTsExtensions: true,
          skipLibCheck: true,
          lib: ["es2024", "dom"],
          types: []
        },
        files: ["main.ts"]
      })
    )
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
    execFileSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    const output = execFileSync(process.execPath, ["--experimental-transform-types", "--no-warnings", "main.ts"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, CAMPUSGATE_URL: daemon.url, CAMPUSGATE_API_KEY: key }
    })
    expect(JSON.parse(output)).toMatchObject({
      isValid: true,
      matchedDomain: "ox.ac.uk",
      offers: expect.arrayContaining(["acme-student-discount"]),
      offer: { id: "acme-student-discount", effectiveStatus: "active", team: "acme" },
      etag: expect.stringMatching(/^"/)
    })
  }, 120_000)
})
