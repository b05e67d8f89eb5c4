/**
 * The review queue on two daemons sharing one Redis (as behind a load
 * balancer, each with its own copy of the config directory): the queue
 * counts what both met, and an approval made on daemon A is served by
 * daemon B within a second.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeRedis, testPrefix, testRedisLayer, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemonsSharing, within } from "./daemon.ts"

const DOMAIN = "fachhochschule-irgendwo.de"

let daemons: Array<Daemon> = []
let key = ""
const prefix = testPrefix()

const validate = (daemon: Daemon, email: string) =>
  call(daemon, "POST", "/api/v1/validate/target-group", { key, body: { email, targetGroupId: "universities" } })

describeRedis("the institution review queue on two daemons sharing Redis", () => {
  beforeAll(async () => {
    const base = copyConfig()
    setSettings(base, [[["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }]])
    key = makeKey(base, "acme", ["validate:target-groups", "institutions:review"])
    daemons = await startDaemonsSharing(base, 2)
  }, 60_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop("SIGKILL")))
    // The daemons' keys: the test layer deletes its prefix's keys when released.
    await Effect.runPromise(Effect.scoped(Layer.build(testRedisLayer(prefix))))
  })

  it("counts what both daemons met, and an approval on A is served by B within a second", async () => {
    const [a, b] = daemons as [Daemon, Daemon]
    expect((await validate(a, `jane@${DOMAIN}`)).body.reasonCode).toBe("UNKNOWN_INSTITUTION")
    expect((await validate(b, `john@${DOMAIN}`)).body.reasonCode).toBe("UNKNOWN_INSTITUTION")
    // B's sighting reaches the store at its next flush (a second at most).
    await within(async () => {
      const one = await call(a, "GET", `/api/v1/institution-reviews/${DOMAIN}`, { key })
      return one.status === 200 && one.body.count === 2
    }, 2000)
    const approved = await call(a, "POST", `/api/v1/institution-reviews/${DOMAIN}/approve`, {
      key,
      body: { name: "Fachhochschule Irgendwo", type: "university", country: "DE" }
    })
    expect(approved.status).toBe(200)
    const took = await within(async () => (await validate(b, `jane@${DOMAIN}`)).body.isValid === true, 1000)
    expect(took).toBeLessThan(1000)
    expect((await call(b, "GET", `/api/v1/institution-reviews/${DOMAIN}`, { key })).body.status).toBe("approved")
  })
})
