/**
 * A reference of `npm run bench:http`: the least a `node:http` server must
 * do to answer `POST /api/v1/validate/target-group` — read the body,
 * `JSON.parse` it, SHA-256 the bearer key and look the hash up, validate
 * the email with the daemon's engine and write `resultText` — with no rate
 * limit, request id, metrics or log line. It bounds what the daemon's hot
 * path can reach on the machine, measured in the same run as the bare
 * hello-world and the daemon. Usage: `node bench/essentialServer.ts
 * CONFIG_DIR DATA_DIR`; prints `{"url": ...}` once it listens.
 */
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { LiveSnapshot } from "../src/app/Snapshot.ts"
import { directorySource } from "../src/app/sources.ts"
import { resultText } from "../src/server/resultJson.ts"

const live = LiveSnapshot.loadSync(directorySource({ configDir: process.argv[2]!, dataDir: process.argv[3] }))
if (!(live instanceof LiveSnapshot)) throw new Error(`the config does not load: ${JSON.stringify(live.problems)}`)
const { config, engine } = live.current()
const hashes = new Set(config.apiKeys.map((record) => record.hash.toLowerCase()))

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const key = (request.headers.authorization ?? "").slice(7)
    const known = hashes.has(`sha256:${createHash("sha256").update(key).digest("hex")}`)
    const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { email: string; targetGroupId: string }
    const body = known ? resultText(engine.validate(input.email, input.targetGroupId)) : "{}"
    response.writeHead(known ? 200 : 401, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body)
    })
    response.end(body)
  })
})
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }))
})
process.once("SIGTERM", () => server.close(() => process.exit(0)))
