/**
 * `store.tls` against a real `redis-server` listening only for TLS on
 * loopback, its certificate signed by a private CA, and asking clients for
 * theirs: without the CA the connection is refused (the server's
 * certificate is always checked); with the CA but no client certificate the
 * server refuses it; with both (read from the config directory, as the
 * daemon reads them) commands go through.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, expect, it } from "vitest"
import { tlsMaterialOf } from "../../src/deployment/stores.ts"
import { Redis, redisStoreLayer } from "../../src/store/redis.ts"
import type { TlsMaterial } from "../../src/store/tlsMaterial.ts"
import { makeCertificate } from "../server/smtpServer.ts"
import { describeWithRedisServer, startRedisServer } from "../support/redisServer.ts"

let server: { readonly port: number; readonly stop: () => void }
let configDir: string

const ping = (tls: TlsMaterial | undefined) =>
  Effect.runPromiseExit(
    Effect.scoped(
      Effect.gen(function* () {
        const redis = Context.get(
          yield* Layer.build(redisStoreLayer({ url: `rediss://127.0.0.1:${server.port}`, keyPrefix: "tls:", tls })),
          Redis
        )
        return yield* redis.send<string>("PING")
      })
    )
  )

describeWithRedisServer("Redis over TLS with a private CA and a client certificate", () => {
  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), "campusgate-redis-tls-"))
    // The server's certificate is its own CA; the client's likewise, trusted by the server.
    const serverCert = await makeCertificate()
    const clientCert = await makeCertificate()
    writeFileSync(join(configDir, "server.pem"), serverCert.cert)
    writeFileSync(join(configDir, "server-key.pem"), serverCert.key)
    writeFileSync(join(configDir, "ca.pem"), serverCert.cert)
    writeFileSync(join(configDir, "client.pem"), clientCert.cert)
    writeFileSync(join(configDir, "client-key.pem"), clientCert.key)
    writeFileSync(join(configDir, "clients-ca.pem"), clientCert.cert)
    server = await startRedisServer((port) => [
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--tls-cert-file",
      join(configDir, "server.pem"),
      "--tls-key-file",
      join(configDir, "server-key.pem"),
      "--tls-ca-cert-file",
      join(configDir, "clients-ca.pem"),
      "--tls-auth-clients",
      "yes"
    ])
  }, 20_000)

  afterAll(() => server?.stop())

  it("checks the server against the CA and presents the client certificate; without either it is refused", async () => {
    const material = await Effect.runPromise(
      tlsMaterialOf({ caFile: "ca.pem", certFile: "client.pem", keyFile: "client-key.pem" }, configDir)
    )
    const both = await ping(material)
    expect(both._tag === "Success" ? both.value : both).toBe("PONG")
    // The system's trust alone does not know the private CA.
    expect((await ping(undefined))._tag).toBe("Failure")
    // The CA alone: the server asks for a client certificate.
    expect((await ping({ ca: material!.ca }))._tag).toBe("Failure")
  }, 30_000)

  it("names the setting and the file that cannot be read", async () => {
    const exit = await Effect.runPromiseExit(tlsMaterialOf({ caFile: "missing.pem" }, configDir))
    expect(exit._tag).toBe("Failure")
    expect(JSON.stringify(exit)).toContain("missing.pem")
    expect(String(exit._tag === "Failure" ? exit.cause : "")).toMatch(/store\.tls\.caFile names missing\.pem/)
  })
})
