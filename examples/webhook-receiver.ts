/**
 * A receiver of job callbacks: checks `Campusgate-Signature` against the raw
 * body before trusting it (a signature older than five minutes is refused,
 * so a captured callback cannot be replayed later).
 * Run it with `CAMPUSGATE_WEBHOOK_SECRET=… node examples/webhook-receiver.ts [port]`
 * and give `http://localhost:PORT/campusgate` as a job's `callbackUrl`; the
 * daemon must sign with the same secret (`CAMPUSGATE_WEBHOOK_SECRET`), and,
 * since callbacks reach public addresses only, be told that this one may be
 * called: `jobs: { callbacks: { allowHosts: [localhost] } }` in campusgate.yaml.
 */
import { createServer } from "node:http"
import { SIGNATURE_HEADER, verifyCallback } from "campusgate/webhook"

const secret = process.env.CAMPUSGATE_WEBHOOK_SECRET
if (secret === undefined || secret === "") throw new Error("set CAMPUSGATE_WEBHOOK_SECRET")

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8")
    const signature = request.headers[SIGNATURE_HEADER.toLowerCase()]
    const trusted = verifyCallback(secret, typeof signature === "string" ? signature : undefined, body, {
      toleranceSeconds: 300,
      now: Date.now()
    })
    if (!trusted) {
      response.writeHead(401).end()
      return
    }
    const job = JSON.parse(body) as { jobId: string; status: string; counts: Record<string, number> }
    console.log(`${job.jobId} ${job.status}: ${JSON.stringify(job.counts)}`)
    // Answer 2xx quickly: anything else is retried with backoff.
    response.writeHead(204).end()
  })
})

server.listen(Number(process.argv[2] ?? 8090), "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : undefined
  console.log(`waiting for job callbacks at http://127.0.0.1:${port}/campusgate`)
})
