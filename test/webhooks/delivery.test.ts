import { mkdtempSync, statSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/testing/TestClock"
import {
  type DeliveryAttempt,
  deliverCallback,
  SIGNATURE_HEADER,
  signCallback,
  verifyCallback,
  webhookSecretFor
} from "../../src/webhooks/delivery.ts"

const payload = {
  jobId: "job_1",
  status: "completed",
  total: 3,
  counts: { valid: 2, invalid: 1, badInput: 0 },
  finishedAt: "2030-01-01T00:00:00.000Z"
}

interface Received {
  readonly signature: string | undefined
  readonly body: string
}

/** A local receiver on a loopback port, answering with `answer`; closed with the scope. */
const receiver = (answer: (request: IncomingMessage, response: ServerResponse, count: number) => void) => {
  const received: Array<Received> = []
  const server = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => {
      body += chunk
    })
    request.on("end", () => {
      received.push({ signature: request.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined, body })
      answer(request, response, received.length)
    })
  })
  return Effect.acquireRelease(
    Effect.callback<{ url: string; received: Array<Received> }>((resume) => {
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/hook`, received }))
      })
    }),
    () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )
}

/** The receivers of these tests listen on loopback, which callbacks reach only when allowed. */
const loopbackAllowed = { allowPrivateNetworks: true, allowHosts: [] }

const statuses =
  (...codes: Array<number>) =>
  (_: IncomingMessage, response: ServerResponse, count: number) =>
    response.writeHead(codes[Math.min(count, codes.length) - 1]!).end()

describe("callback signatures", () => {
  const now = 1_900_000_000_000
  const t = now / 1000
  it("verify what was signed, within the tolerance, and nothing else", () => {
    const header = signCallback("s3cret", t, '{"a":1}')
    expect(header).toMatch(/^t=1900000000,v1=[0-9a-f]{64}$/)
    const options = { toleranceSeconds: 300, now }
    expect(verifyCallback("s3cret", header, '{"a":1}', options)).toBe(true)
    expect(verifyCallback("s3cret", header, Buffer.from('{"a":1}'), options)).toBe(true)
    expect(verifyCallback("s3cret", header, '{"a":2}', options)).toBe(false)
    expect(verifyCallback("other", header, '{"a":1}', options)).toBe(false)
    expect(verifyCallback("s3cret", header, '{"a":1}', { toleranceSeconds: 300, now: now + 301_000 })).toBe(false)
    expect(verifyCallback("s3cret", header.replace("t=1900000000", "t=1900000001"), '{"a":1}', options)).toBe(false)
    for (const bad of [undefined, "", "t=1", "v1=abc", "t=x,v1=00", header.slice(0, -2)]) {
      expect(verifyCallback("s3cret", bad, '{"a":1}', options)).toBe(false)
    }
    const rotated = `${signCallback("old", t, "b")},v1=${signCallback("new", t, "b").split("v1=")[1]}`
    expect(verifyCallback("new", rotated, "b", options)).toBe(true)
  })
})

describe("deliverCallback", () => {
  it.effect("retries a 500 after the backoff, then succeeds; every attempt is reported and signed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url, received } = yield* receiver(statuses(500, 204))
        const attempts = yield* Queue.unbounded<DeliveryAttempt>()
        const fiber = yield* deliverCallback(url, payload, "s3cret", {
          policy: loopbackAllowed,
          onAttempt: (attempt) => Queue.offer(attempts, attempt)
        }).pipe(Effect.forkChild)
        expect(yield* Queue.take(attempts)).toEqual({
          at: "1970-01-01T00:00:00.000Z",
          delivered: false,
          reason: "http"
        })
        yield* TestClock.adjust("1 second")
        expect(yield* Queue.take(attempts)).toEqual({ at: "1970-01-01T00:00:01.000Z", delivered: true })
        yield* Fiber.join(fiber)
        expect(received).toHaveLength(2)
        for (const [i, request] of received.entries()) {
          expect(JSON.parse(request.body)).toEqual(payload)
          expect(request.signature).toMatch(new RegExp(`^t=${i},v1=`))
          expect(
            verifyCallback("s3cret", request.signature, request.body, { toleranceSeconds: 5, now: i * 1000 })
          ).toBe(true)
        }
        expect(received[0]!.body).not.toMatch(/@/)
      })
    )
  )

  it.effect("backs off exponentially and gives up after the attempts, reporting network errors", () =>
    Effect.gen(function* () {
      const attempts = yield* Queue.unbounded<DeliveryAttempt>()
      const port = yield* Effect.scoped(Effect.map(receiver(statuses(200)), ({ url }) => new URL(url).port))
      const observed: Array<string> = []
      const fiber = yield* deliverCallback(`http://127.0.0.1:${port}/hook`, payload, "s", {
        policy: loopbackAllowed,
        attempts: 3,
        backoff: "2 seconds",
        onAttempt: (attempt) => Queue.offer(attempts, attempt),
        observe: {
          attempted: (delivered) => observed.push(delivered ? "delivered" : "failed"),
          gaveUp: () => observed.push("given up")
        }
      }).pipe(Effect.forkChild)
      const first = yield* Queue.take(attempts)
      expect(first).toMatchObject({ delivered: false, reason: "connect" })
      yield* TestClock.adjust("2 seconds")
      expect((yield* Queue.take(attempts)).at).toBe("1970-01-01T00:00:02.000Z")
      yield* TestClock.adjust("4 seconds")
      expect((yield* Queue.take(attempts)).at).toBe("1970-01-01T00:00:06.000Z")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "CallbackDeliveryError", attempts: 3, lastReason: "connect" })
      expect(observed).toEqual(["failed", "failed", "failed", "given up"])
    })
  )

  it.effect("follows no redirect to another origin", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const elsewhere = yield* receiver(statuses(200))
        const redirecting = yield* receiver((_, response) => response.writeHead(307, { location: elsewhere.url }).end())
        const attempts: Array<DeliveryAttempt> = []
        const error = yield* Effect.flip(
          deliverCallback(redirecting.url, payload, "s", {
            policy: loopbackAllowed,
            attempts: 1,
            onAttempt: (attempt) => Effect.sync(() => attempts.push(attempt))
          })
        )
        expect(error.attempts).toBe(1)
        expect(attempts[0]).toMatchObject({ delivered: false, reason: "redirect" })
        expect(elsewhere.received).toHaveLength(0)
      })
    )
  )
})

describe("deliverCallback's reach", () => {
  it.effect("never calls a loopback receiver unless private networks are allowed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url, received } = yield* receiver(statuses(204))
        const attempts: Array<DeliveryAttempt> = []
        const error = yield* Effect.flip(
          deliverCallback(url, payload, "s", {
            attempts: 1,
            onAttempt: (attempt) => Effect.sync(() => attempts.push(attempt))
          })
        )
        expect(error.lastReason).toBe("blocked")
        expect(attempts).toEqual([{ at: expect.any(String), delivered: false, reason: "blocked" }])
        expect(received).toHaveLength(0)
        yield* deliverCallback(url, payload, "s", { attempts: 1, policy: loopbackAllowed })
        expect(received).toHaveLength(1)
      })
    )
  )
})

describe("webhookSecretFor", () => {
  it("uses the configured secret, else one generated once and kept private in the data directory", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "campusgate-secret-"))
    expect(webhookSecretFor(dataDir, "configured")).toBe("configured")
    const generated = webhookSecretFor(dataDir, undefined)
    expect(generated).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(webhookSecretFor(dataDir, "")).toBe(generated)
    expect(statSync(join(dataDir, "webhook-secret")).mode & 0o777).toBe(0o600)
  })
})
