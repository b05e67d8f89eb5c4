/**
 * The work the daemon does once it serves (`afterFirstResponse`, the engine
 * context's warming) waits for the first response to have gone, so a health
 * check polled as the daemon starts is not kept waiting behind it; with no
 * request, it runs after a wait.
 */
import { createServer, get, type Server } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { afterFirstResponse } from "../../src/server/NodeServer.ts"

const servers: Array<Server> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

const listening = async (answerAfterMs: number): Promise<{ server: Server; url: string }> => {
  const server = createServer((_request, response) => {
    setTimeout(() => response.end("ok"), answerAfterMs)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return { server, url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/` }
}

const fetchText = (url: string) =>
  new Promise<string>((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = ""
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => resolve(text))
    }).on("error", reject)
  })

describe("afterFirstResponse", () => {
  it("runs once the first response has gone, not while it is being made, and once only", async () => {
    const { server, url } = await listening(100)
    const runs: Array<number> = []
    afterFirstResponse(server, () => runs.push(Date.now()), 60_000)
    const asked = Date.now()
    const answer = fetchText(url)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(runs).toEqual([])
    expect(await answer).toBe("ok")
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runs).toHaveLength(1)
    expect(runs[0]! - asked).toBeGreaterThanOrEqual(90)
    await fetchText(url)
    expect(runs).toHaveLength(1)
  })

  it("runs after the wait when no request comes", async () => {
    const { server } = await listening(0)
    let ran = false
    afterFirstResponse(
      server,
      () => {
        ran = true
      },
      50
    )
    expect(ran).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(ran).toBe(true)
  })
})
