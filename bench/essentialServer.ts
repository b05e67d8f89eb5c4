/**
 * The reference of `npm run bench:http`: the least a `node:http` server
 * must do to answer the daemon's two measured requests, with the daemon's
 * engine and serialisers and no rate limit, request id, metrics, log line
 * or schema:
 * - `POST /api/v1/validate/target-group`: read the body, `JSON.parse` it,
 *   SHA-256 the bearer key and look the hash up, validate the email and
 *   write `resultText`;
 * - `POST /api/v1/validate/bulk`: the same for each email of the body
 *   (`{ emails, targetGroupId }`), writing the compact rows, the summary
 *   and a request id as bytes (`JsonBytes`).
 * It bounds what the daemon can reach on the machine, measured in the same
 * run as the daemon and the bare hello-world. Usage: `node
 * bench/essentialServer.ts CONFIG_DIR DATA_DIR`; prints `{"url": ...}` once
 * it listens.
 */
import { createHash, randomUUID } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { LiveSnapshot } from "../src/app/Snapshot.ts"
import { directorySource } from "../src/app/sources.ts"
import { toResultRow } from "../src/domain/ResultRow.ts"
import { rowText } from "../src/domain/rowText.ts"
import { JsonBytes } from "../src/server/jsonBytes.ts"
import { resultText } from "../src/server/resultJson.ts"

const live = LiveSnapshot.loadSync(directorySource({ configDir: process.argv[2]!, dataDir: process.argv[3] }))
if (!(live instanceof LiveSnapshot)) throw new Error(`the config does not load: ${JSON.stringify(live.problems)}`)
const { config, engine } = live.current()
const hashes = new Set(config.apiKeys.map((record) => record.hash.toLowerCase()))

const single = (body: string): string => {
  const input = JSON.parse(body) as { email: string; targetGroupId: string }
  return resultText(engine.validate(input.email, input.targetGroupId))
}

const bulk = (body: string): Buffer => {
  const { emails, targetGroupId } = JSON.parse(body) as { emails: ReadonlyArray<string>; targetGroupId: string }
  const out = new JsonBytes(256 + emails.length * 320)
  const byReasonCode: Record<string, number> = {}
  let valid = 0
  let badFormat = 0
  const results = engine.validateMany(emails, targetGroupId)
  out.write(`{"results":[`)
  for (let i = 0; i < emails.length; i++) {
    const result = results[i]!
    if (result.isValid) valid++
    const code = result.reasonCode
    if (code !== undefined) {
      byReasonCode[code] = (byReasonCode[code] ?? 0) + 1
      if (code === "INVALID_EMAIL_FORMAT") badFormat++
    }
    const row = rowText(toResultRow(emails[i]!, result))
    out.write(i === 0 ? row : `,${row}`)
  }
  const summary = { total: emails.length, valid, invalid: emails.length - valid, badFormat, byReasonCode }
  out.write(`],"summary":${JSON.stringify(summary)},"requestId":${JSON.stringify(randomUUID())}}`)
  return out.bytes()
}

const answer = (response: ServerResponse, status: number, body: string | Buffer) => {
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": typeof body === "string" ? Buffer.byteLength(body) : body.length
  })
  response.end(body)
}

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const key = (request.headers.authorization ?? "").slice(7)
    if (!hashes.has(`sha256:${createHash("sha256").update(key).digest("hex")}`)) return answer(response, 401, "{}")
    const body = Buffer.concat(chunks).toString("utf8")
    if (request.url === "/api/v1/validate/bulk") return answer(response, 200, bulk(body))
    if (request.url === "/api/v1/validate/target-group") return answer(response, 200, single(body))
    answer(response, 404, "{}")
  })
})
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }))
})
process.once("SIGTERM", () => server.close(() => process.exit(0)))
