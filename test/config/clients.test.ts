import { describe, expect, it } from "vitest"
import { loadDirectory } from "../../src/app/sources.ts"
import { formatProblem } from "../../src/domain/errors.ts"
import { hashClientSecret } from "../../src/oidc/clientSecrets.ts"
import { type Files, makeDirs, validConfig } from "./configFiles.ts"

const load = (config: Files) => {
  const dirs = makeDirs(config)
  const result = loadDirectory({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
  const problems = result.ok ? [] : result.problems.map((p) => formatProblem(p).replaceAll(`${dirs.configDir}/`, ""))
  return { result, problems }
}

const hash = hashClientSecret("cgs_example")

const shopYaml = `id: shop
name: The shop
type: confidential
redirectUris:
  - https://shop.example/callback
allowedOffers: [spring]
secretHashes:
  - ${hash}
`

describe("clients/*.yaml", () => {
  it("loads the OpenID Connect clients with the config", () => {
    const { result } = load({
      ...validConfig,
      "clients/shop.yaml": shopYaml,
      "clients/app.yaml": `id: app
name: The app
type: public
redirectUris: [http://localhost:5173/callback]
allowedOffers: [spring]
`
    })
    expect(result.ok && result.config.clients?.map((client) => [client.id, client.type])).toEqual([
      ["app", "public"],
      ["shop", "confidential"]
    ])
  })

  it("points each mistake at its file, line and field: a missing offer, a secret that does not fit the type, a bad URI", () => {
    const { result, problems } = load({
      ...validConfig,
      "clients/shop.yaml": shopYaml.replace("allowedOffers: [spring]", "allowedOffers: [spring, sprnig]"),
      "clients/app.yaml": `id: app
name: The app
type: public
redirectUris: [http://localhost:5173/callback]
allowedOffers: [spring]
secretHashes: [${hash}]
`,
      "clients/web.yaml": `id: web
name: The web
type: public
redirectUris: [http://web.example/callback]
allowedOffers: [spring]
`,
      "clients/backend.yaml": `id: backend
name: A backend
type: confidential
redirectUris: [https://backend.example/cb]
allowedOffers: [spring]
`
    })
    expect(result.ok).toBe(false)
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^clients\/shop\.yaml:6:\d+ allowedOffers\[1\]: no offer "sprnig".*spring/),
        expect.stringMatching(/^clients\/web\.yaml:4:\d+ redirectUris\[0\]: an https URL \(http only for localhost\)/),
        expect.stringMatching(/^clients\/app\.yaml:\d+:\d+ secretHashes: a public client has no secret/),
        expect.stringMatching(
          /^clients\/backend\.yaml:.*secretHashes: a confidential client needs at least one secret hash/
        )
      ])
    )
  })

  it("refuses a client id defined twice", () => {
    const { problems } = load({ ...validConfig, "clients/shop.yaml": shopYaml, "clients/shop2.yaml": shopYaml })
    expect(problems).toEqual([
      expect.stringMatching(/^clients\/shop2\.yaml:1:\d+ id: client "shop" is already defined/)
    ])
  })
})
