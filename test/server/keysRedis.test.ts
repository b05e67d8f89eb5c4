/**
 * API keys managed over the API on two daemons sharing one Redis (as behind
 * a load balancer, each with its own copy of the config directory): a key
 * made on daemon A works on A at once and on B within a second; revoked on
 * A, it is refused by A at once and by B within a second.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, expect, it } from "vitest"
import { createApiKey } from "../../src/app/Keys.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { describeRedis, testPrefix, testRedisLayer, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, setSettings, startDaemonsSharing, within } from "./daemon.ts"

let daemons: Array<Daemon> = []
let admin = ""
let adminId = ""
const prefix = testPrefix()

const validate = (daemon: Daemon, key: string) =>
  call(daemon, "POST", "/api/v1/validate/target-group", {
    key,
    body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
  })

describeRedis("API keys over the API on two daemons sharing Redis", () => {
  beforeAll(async () => {
    const base = copyConfig()
    setSettings(base, [[["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }]])
    // In the config directory's api-keys.yaml, as a team keeps its first key in git.
    const made = createApiKey({
      ...base,
      team: "acme" as TeamId,
      scopes: ["keys:read", "keys:write", "validate:target-groups"]
    })
    admin = made.key
    adminId = made.id
    daemons = await startDaemonsSharing(base, 2)
  }, 60_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop("SIGKILL")))
    // The daemons' keys: the test layer deletes its prefix's keys when released.
    await Effect.runPromise(Effect.scoped(Layer.build(testRedisLayer(prefix))))
  })

  it("a key made on A works on A at once and on B within a second; revoked on A, both refuse it as soon", async () => {
    const [a, b] = daemons as [Daemon, Daemon]
    const made = await call(a, "POST", "/api/v1/keys", {
      key: admin,
      body: { name: "across", scopes: ["validate:target-groups"] }
    })
    expect(made.status).toBe(201)
    const { key, id } = made.body as { key: string; id: string }
    expect((await validate(a, key)).status).toBe(200)
    const accepted = await within(async () => (await validate(b, key)).status === 200, 1000)
    // Listed by both: the record is in the shared store.
    const listed = await call(b, "GET", "/api/v1/keys?limit=100", { key: admin })
    expect(listed.body.data.some((entry: { id: string }) => entry.id === id)).toBe(true)

    const revoked = await call(a, "DELETE", `/api/v1/keys/${id}`, { key: admin })
    expect(revoked.status).toBe(200)
    expect((await validate(a, key)).status).toBe(401)
    const refused = await within(async () => (await validate(b, key)).status === 401, 1000)
    // Revoked on B too: already revoked, whichever daemon is asked.
    expect((await call(b, "DELETE", `/api/v1/keys/${id}`, { key: admin })).status).toBe(409)
    console.log(`B accepted the new key after ${Math.round(accepted)} ms, refused it after ${Math.round(refused)} ms`)
  }, 30_000)

  it("a key defined in the config directory is revoked for every daemon through the store", async () => {
    const [a, b] = daemons as [Daemon, Daemon]
    const made = await call(a, "POST", "/api/v1/keys", {
      key: admin,
      body: { scopes: ["keys:write", "validate:target-groups"] }
    })
    const own = made.body as { key: string; id: string }
    // The new key revokes the config directory's key (a team's key may revoke any key of its team).
    const revoked = await call(a, "DELETE", `/api/v1/keys/${adminId}`, { key: own.key })
    expect(revoked.status).toBe(200)
    expect((await validate(a, admin)).status).toBe(401)
    await within(async () => (await validate(b, admin)).status === 401, 1000)
  }, 30_000)
})
