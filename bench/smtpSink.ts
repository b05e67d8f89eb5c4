/**
 * The mail server of `npm run bench:hosted`, on a worker thread so that
 * receiving and parsing 200 messages a second never holds the event loop
 * that times the requests: an SMTP server on loopback (the `smtp-server`
 * package, STARTTLS with the certificate it is given) that accepts every
 * message, reads it as its recipient would (mailparser) and posts
 * `{ to, code }` to the thread that started it. Started with
 * `workerData = { key, cert }`; posts `{ port }` once it listens.
 */
import { parentPort, workerData } from "node:worker_threads"
import { simpleParser } from "mailparser"
import { SMTPServer } from "smtp-server"

const { key, cert } = workerData as { readonly key: string; readonly cert: string }
const port = parentPort!

const server = new SMTPServer({
  authOptional: true,
  key,
  cert,
  logger: false,
  onData(stream, _session, callback) {
    simpleParser(stream).then(
      (parsed) => {
        const to = parsed.to === undefined ? [] : Array.isArray(parsed.to) ? parsed.to : [parsed.to]
        const code = /^\s*(\d{6,10})\s*$/m.exec(parsed.text ?? "")?.[1]
        for (const address of to.flatMap((list) => list.value)) port.postMessage({ to: address.address, code })
        callback()
      },
      (error: Error) => callback(error)
    )
  }
})

server.listen(0, "127.0.0.1", () => {
  const address = server.server.address()
  port.postMessage({ port: typeof address === "object" && address !== null ? address.port : 0 })
})
port.on("message", (message: unknown) => {
  if (message === "close") server.close(() => process.exit(0))
})
