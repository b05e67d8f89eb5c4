/**
 * The baseline of `npm run bench:http`: a bare `node:http` hello-world
 * server on a free loopback port. Prints `{"url": ...}` on standard output
 * once it listens; runs until killed.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const body = "hello world"
const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "text/plain", "content-length": body.length })
  response.end(body)
})
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }))
})
process.once("SIGTERM", () => server.close(() => process.exit(0)))
