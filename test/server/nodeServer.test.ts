/**
 * The work the daemon does once it serves (`afterFirstResponse`, the engine
 * context's warming) waits for the first response to have gone, so a health
 * check polled as the daemon starts is not kept waiting behind it; with no
 * request, it runs after a wait. A request that comes after the server
 * listens but before the app is served is held and answered, not dropped.
 */
import { createServer, get, request, type Server } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { afterFirstResponse, holdUntilServed } from "../../src/server/NodeServer.ts"

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

describe("holdUntilServed", () => {
  it("answers the requests that came before the app was served, in their order, once it is", async () => {
    const server = createServer()
    servers.push(server)
    const held = holdUntilServed(server)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/`
    const plain = fetchText(`${url}first`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const continued = new Promise<string>((resolve, reject) => {
      const sent = request(
        `${url}second`,
        { method: "POST", agent: false, headers: { expect: "100-continue", "content-length": "4" } },
        (response) => {
          let text = ""
          response.on("data", (chunk) => (text += chunk))
          response.on("end", () => resolve(text))
        }
      )
      sent.on("continue", () => sent.end("body"))
      sent.on("error", reject)
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const seen: Array<string> = []
    held.serve({
      request: (incoming, response) => {
        seen.push(incoming.url ?? "")
        response.end(`answered ${incoming.url}`)
      },
      checkContinue: (incoming, response) => {
        seen.push(`continue ${incoming.url}`)
        response.writeContinue()
        let body = ""
        incoming.on("data", (chunk) => (body += chunk))
        incoming.on("end", () => response.end(`answered ${incoming.url} with ${body}`))
      }
    })
    expect(await plain).toBe("answered /first")
    expect(await continued).toBe("answered /second with body")
    expect(seen).toEqual(["/first", "continue /second"])
    // Served: later requests go straight to the listeners.
    expect(await fetchText(`${url}third`)).toBe("answered /third")
  })
})
