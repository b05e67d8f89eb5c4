/**
 * The fast path with either kind of rate-limit store: process memory (the
 * decision is taken synchronously) and a store that must be run as an
 * effect (as Redis is; here Effect's own memory store stands in for it).
 * Both servers run in this process and get the same requests; their
 * answers, log lines and request metrics must be the same.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createApiKey, revokeApiKey } from "../../src/app/Keys.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { type RequestLog, RequestLogger } from "../../src/server/RequestLogger.ts"
import { serverLayer } from "../../src/server/Server.ts"
import { copyConfig } from "./daemon.ts"

interface Running {
  readonly url: string
  readonly logs: Array<RequestLog>
  readonly dirs: { configDir: string; dataDir: string }
  readonly key: { id: string; key: string }
  readonly runtime: ManagedRuntime.ManagedRuntime<never, unknown>
}

const start = async (store?: Layer.Layer<RateLimiter.RateLimiterStore>): Promise<Running> => {
  const dirs = copyConfig()
  const file = join(dirs.configDir, "campusgate.yaml")
  writeFileSync(file, readFileSync(file, "utf8").replace(/validate:\n {4}requests: \d+/, "validate:\n    requests: 4"))
  const key = createApiKey({ ...dirs, team: "acme" as TeamId, scopes: [...allScopes] })
  const logs: Array<RequestLog> = []
  let url = ""
  const runtime = ManagedRuntime.make(
    serverLayer({
      ...dirs,
      port: 0,
      host: "127.0.0.1",
      logOutput: (text) => {
        for (const line of text.split("\n")) if (line.includes('"msg":"listening"')) url = JSON.parse(line).url
      },
      requestLogger: Layer.succeed(RequestLogger, RequestLogger.of({ log: (entry) => logs.push(entry) })),
      rateLimiterStore: store
    })
  )
  await runtime.runPromise(Effect.void)
  return { url, logs, dirs, key, runtime }
}

let synchronous: Running
let asynchronous: Running

beforeAll(async () => {
  synchronous = await start()
  asynchronous = await start(RateLimiter.layerStoreMemory)
}, 60_000)

afterAll(async () => {
  await synchronous?.runtime.dispose()
  await asynchronous?.runtime.dispose()
})

const send = async (server: Running, path: string, body: string, requestId: string) => {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${server.key.key}`,
      "content-type": "application/json",
      "x-request-id": requestId
    },
    body
  })
  const headers = [...response.headers].filter(([name]) => name !== "date" && name !== "keep-alive")
  return { status: response.status, headers, body: await response.text() }
}

const requests: ReadonlyArray<readonly [string, string]> = [
  ["/api/v1/validate/target-group", JSON.stringify({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })],
  ["/v1/validate/offer", JSON.stringify({ email: "jane@ox.ac.uk", offerId: "acme-student-discount" })],
  ["/api/v1/validate/target-group", "{not json"],
  ["/api/v1/validate/target-group", JSON.stringify({ email: "jane@ox.ac.uk", targetGroupId: "no-such-group" })],
  ["/api/v1/validate/target-group", JSON.stringify({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })],
  ["/api/v1/validate/offer", JSON.stringify({ email: "jane@ox.ac.uk", offerId: "acme-student-discount" })]
]

describe("the fast path over a synchronous and an effectful rate-limit store", () => {
  it("answers, logs and counts the same, 429 included", async () => {
    const answers = []
    for (const [index, [path, body]] of requests.entries()) {
      const one = await send(synchronous, path, body, `req-${index}`)
      const other = await send(asynchronous, path, body, `req-${index}`)
      answers.push(one)
      expect(one).toEqual(other)
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 400, 404, 429, 429])
    expect(answers[4]!.headers).toContainEqual(["retry-after", expect.stringMatching(/^\d+$/)])
    const logged = (server: Running) =>
      server.logs.map(({ durationMs: _, keyId, ...rest }) => ({ ...rest, ownKey: keyId === server.key.id }))
    expect(logged(synchronous)).toEqual(logged(asynchronous))
    expect(logged(synchronous)).toHaveLength(requests.length)
    const counts = async (server: Running) =>
      (await (await fetch(`${server.url}/metrics`)).text())
        .split("\n")
        .filter(
          (line) => line.startsWith("campusgate_http_requests_total") || line.startsWith("campusgate_validations")
        )
    expect(await counts(synchronous)).toEqual(await counts(asynchronous))
  })

  it("refuses a key once its revocation is loaded, though the fast path had already matched it", async () => {
    const server = synchronous
    revokeApiKey({ ...server.dirs, id: server.key.id })
    const deadline = Date.now() + 10_000
    let answer = await send(server, requests[0]![0], requests[0]![1], "after-revocation")
    while (answer.status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      answer = await send(server, requests[0]![0], requests[0]![1], "after-revocation")
    }
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toMatchObject({ code: "INVALID_API_KEY", detail: "The API key has been revoked." })
  })
})
