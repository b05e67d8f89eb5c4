import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OutboundPolicy, postJson, type Resolver, refusedTarget } from "../../src/net/outbound.ts"

const publicOnly: OutboundPolicy = { allowPrivateNetworks: false, allowHosts: [] }
const fixed =
  (...addresses: Array<string>): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
const failing: Resolver = async () => {
  throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
}
const signal = () => AbortSignal.timeout(5000)

let port: number
let hits = 0
const server = createServer((request, response) => {
  hits++
  request.resume()
  request.on("end", () => response.writeHead(204).end())
})
beforeAll(async () => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  port = (server.address() as AddressInfo).port
})
afterAll(() => {
  server.close()
})

describe("refusedTarget", () => {
  it("refuses every spelling of a loopback host, private and metadata addresses, and names that resolve to them", async () => {
    for (const url of [
      "http://127.0.0.1/x",
      "http://2130706433/x",
      "http://0x7f000001/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://[::1]:8080/x",
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.5/x",
      "http://0.0.0.0/x"
    ]) {
      expect(await refusedTarget(url, publicOnly, fixed("93.184.216.34")), url).toMatch(/may not reach/)
    }
    expect(await refusedTarget("https://hooks.example/x", publicOnly, fixed("127.0.0.1"))).toMatch(/may not reach/)
    // It names the setting that would allow it.
    expect(await refusedTarget("http://localhost:4000/hooks", publicOnly, fixed("127.0.0.1"))).toContain(
      'jobs.callbacks.allowHosts: ["localhost"]'
    )
    // One internal address among public ones is enough.
    expect(await refusedTarget("https://hooks.example/x", publicOnly, fixed("93.184.216.34", "10.0.0.1"))).toMatch(
      /may not reach/
    )
  })

  it("accepts a host that resolves to public addresses only, and says when a host does not resolve", async () => {
    expect(await refusedTarget("https://hooks.example/x", publicOnly, fixed("93.184.216.34"))).toBeUndefined()
    expect(await refusedTarget("https://nowhere.example/x", publicOnly, failing)).toMatch(/does not resolve/)
    expect(await refusedTarget("ftp://hooks.example/x", publicOnly, fixed("93.184.216.34"))).toMatch(/http or https/)
  })

  it("lets the operator allow private networks, or named hosts whatever they resolve to", async () => {
    const internal = fixed("10.0.0.7")
    expect(await refusedTarget("http://hooks.internal/x", publicOnly, internal)).toBeDefined()
    expect(
      await refusedTarget("http://hooks.internal/x", { allowPrivateNetworks: true, allowHosts: [] }, internal)
    ).toBeUndefined()
    const named = { allowPrivateNetworks: false, allowHosts: ["HOOKS.internal", "[::1]"] }
    expect(await refusedTarget("http://hooks.internal/x", named, internal)).toBeUndefined()
    expect(await refusedTarget("http://[::1]/x", named, internal)).toBeUndefined()
    expect(await refusedTarget("http://other.internal/x", named, internal)).toBeDefined()
  })
})

describe("postJson", () => {
  it("never connects to a loopback receiver by default, and reaches it when allowed", async () => {
    const before = hits
    const url = `http://127.0.0.1:${port}/hook`
    expect(await postJson(url, "{}", {}, publicOnly, signal())).toEqual({ delivered: false, reason: "blocked" })
    expect(hits).toBe(before)
    const allowed = { allowPrivateNetworks: false, allowHosts: ["127.0.0.1"] }
    expect(await postJson(url, "{}", {}, allowed, signal())).toEqual({ delivered: true })
    expect(hits).toBe(before + 1)
  })

  it("checks the host again at every request: a name that now resolves to loopback is not called (DNS rebinding)", async () => {
    const before = hits
    const rebound = await postJson(
      `http://hooks.example:${port}/hook`,
      "{}",
      {},
      publicOnly,
      signal(),
      fixed("127.0.0.1")
    )
    expect(rebound).toEqual({ delivered: false, reason: "blocked" })
    expect(hits).toBe(before)
  })

  it("connects to exactly the addresses it checked, not to a second resolution", async () => {
    const before = hits
    // hooks.test resolves nowhere on this machine: the request can only reach the receiver through the pinned address.
    const allowed = { allowPrivateNetworks: false, allowHosts: ["hooks.test"] }
    const outcome = await postJson(`http://hooks.test:${port}/hook`, "{}", {}, allowed, signal(), fixed("127.0.0.1"))
    expect(outcome).toEqual({ delivered: true })
    expect(hits).toBe(before + 1)
  })

  it("reports reason classes, never the receiver's status line or error text", async () => {
    const allowed = { allowPrivateNetworks: true, allowHosts: [] }
    const closed = createServer()
    closed.listen(0, "127.0.0.1")
    await once(closed, "listening")
    const closedPort = (closed.address() as AddressInfo).port
    closed.close()
    expect(await postJson(`http://127.0.0.1:${closedPort}/`, "{}", {}, allowed, signal())).toEqual({
      delivered: false,
      reason: "connect"
    })
    expect(await postJson("http://nowhere.test/", "{}", {}, allowed, signal(), failing)).toEqual({
      delivered: false,
      reason: "dns"
    })
  })
})
