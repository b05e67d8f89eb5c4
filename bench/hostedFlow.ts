/**
 * `npm run bench:hosted`: the hosted verification page's server steps under
 * a steady stream of people, against the built daemon (`npm run build`
 * first) in its own process on loopback, mail going to a loopback SMTP
 * server (`smtpSink.ts`, on a worker thread, STARTTLS as in production;
 * BENCH_SMTP_SECURITY=none for plain) that hands back each message's code;
 * the daemon sends BENCH_MAIL_CONCURRENCY (32) messages at once, so mail
 * keeps up with the flows (at the default 4, each a new STARTTLS
 * connection, about 45 a second got through here, and the code step waited
 * on the queue).
 *
 * Flows start open-loop at BENCH_RATE flows per second (default 200),
 * whatever the answers, for BENCH_SECONDS (20) after a warm-up (3 s); each
 * flow is one browser without JavaScript (its own cookie) and a distinct
 * address (the per-address limits), and goes through the four steps a
 * person does, each timed from request to last byte:
 * - `firstPage`: `GET /verify/{offerId}?redirect_uri=…&state=…` (200);
 * - `address`: the address posted (303 back to the flow);
 * - `codePage`: the code form (200);
 * - `code`: the code from the message posted (303 on to the redirect).
 * The wait for the message between the code page and the code is not a
 * server step and is not timed. The baseline, in the same run: `GET
 * /healthz` at the same rate (BENCH_RATE requests per second), so each
 * step's p99 reads as a ratio to it on a noisy shared machine. The offer's
 * limits and `rateLimits.hostedFlow` are raised out of reach, so the
 * figures are the server's, not refusals; `unexpected` counts every answer
 * other than the one a step expects (it must be 0). The run ends with the
 * offer's funnel as its status reports it (every measured flow started,
 * reached the code step and completed). BENCH_CPU_PROF=DIR writes the
 * daemon's CPU profile there. Progress on standard error; the final line
 * on standard output is JSON.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { makeCertificate } from "../test/server/smtpServer.ts"
import { cpuSeconds, prepareConfig, startDaemon } from "./daemonProcess.ts"

const rate = Number(process.env.BENCH_RATE ?? 200)
const seconds = Number(process.env.BENCH_SECONDS ?? 20)
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const security = process.env.BENCH_SMTP_SECURITY === "none" ? "none" : "starttls"
/** Messages the daemon sends at once (`verification.mail.concurrency`, default 4): enough that mail keeps up with the flows. */
const mailConcurrency = Number(process.env.BENCH_MAIL_CONCURRENCY ?? 32)
const root = mkdtempSync(join(tmpdir(), "campusgate-bench-hosted-"))
const log = (message: string) => console.error(message)
const SHOP = "https://shop.example"
const offerId = "bench-hosted"
const hosts = ["ox.ac.uk", "cam.ac.uk", "tum.de", "mit.edu", "ethz.ch", "uva.nl", "kuleuven.be", "harvard.edu"]
const STEPS = ["firstPage", "address", "codePage", "code"] as const
type Step = (typeof STEPS)[number]

// The mail server, on its own thread; codes by recipient.
const certificate = await makeCertificate()
const sink = new Worker(new URL("./smtpSink.ts", import.meta.url), { workerData: certificate })
const codes = new Map<string, string>()
const waiting = new Map<string, (code: string) => void>()
const smtpPort = await new Promise<number>((resolve, reject) => {
  sink.once("error", reject)
  sink.on("message", (message: { port?: number; to?: string; code?: string }) => {
    if (message.port !== undefined) return resolve(message.port)
    if (message.to === undefined || message.code === undefined) return
    const to = message.to.toLowerCase()
    const waiter = waiting.get(to)
    if (waiter === undefined) codes.set(to, message.code)
    else {
      waiting.delete(to)
      waiter(message.code)
    }
  })
})

/** The code sent to `address`, once its message arrives (rejects after 60 s). */
const codeFor = (address: string) =>
  new Promise<string>((resolve, reject) => {
    const arrived = codes.get(address)
    if (arrived !== undefined) {
      codes.delete(address)
      return resolve(arrived)
    }
    const timer = setTimeout(() => {
      waiting.delete(address)
      reject(new Error(`no message to ${address}`))
    }, 60_000)
    waiting.set(address, (code) => {
      clearTimeout(timer)
      resolve(code)
    })
  })

const dirs = prepareConfig(
  root,
  ["offers:read"],
  [
    [
      ["verification", "mail"],
      {
        from: "Bench <offers@acme.example>",
        smtp: { host: "127.0.0.1", port: smtpPort, security, ...(security === "none" ? {} : { ca: "smtp-ca.pem" }) },
        maxMessagesPerMailbox: 1_000_000,
        maxQueued: 1_000_000,
        concurrency: mailConcurrency
      }
    ],
    [["verification", "redirectOrigins"], [SHOP]],
    [["rateLimits", "hostedFlow"], { requests: 1_000_000_000, windowSeconds: 60 }]
  ]
)
writeFileSync(join(dirs.configDir, "smtp-ca.pem"), certificate.cert)
writeFileSync(
  join(dirs.configDir, "offers", `${offerId}.yaml`),
  `${JSON.stringify({
    id: offerId,
    team: "acme",
    name: "Bench hosted",
    targetGroups: ["universities"],
    status: "active",
    verification: { redirectOrigins: [SHOP], maxMessagesPerAddress: 1_000_000, maxAttempts: 1000 }
  })}\n`
)

const loadBefore = loadavg()[0]!
const daemon = await startDaemon(
  dirs,
  join(root, "daemon.log"),
  process.env.BENCH_CPU_PROF === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
)
const target = new URL(daemon.url)
const agent = new Agent({ keepAlive: true, maxSockets: 512 })
log(`node ${process.version}, ${availableParallelism()} CPUs, load ${loadBefore.toFixed(2)}; daemon at ${daemon.url}`)

interface Answer {
  readonly status: number
  readonly ms: number
  readonly location: string | undefined
  readonly cookies: ReadonlyArray<string>
  readonly body: string
}

const call = (method: "GET" | "POST", path: string, cookie: string, body?: string) =>
  new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string | number> = { cookie }
    if (body !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded"
      headers["content-length"] = Buffer.byteLength(body)
    }
    const sent = performance.now()
    const sending = request({ host: target.hostname, port: target.port, path, method, agent, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          ms: performance.now() - sent,
          location: response.headers.location,
          cookies: response.headers["set-cookie"] ?? [],
          body: Buffer.concat(chunks).toString("utf8")
        })
      )
    })
    sending.on("error", reject)
    sending.end(body)
  })

/** The latencies of one phase, by step, and every answer a step did not expect. */
const makeTally = () => ({
  latencies: Object.fromEntries(STEPS.map((step) => [step, [] as Array<number>])) as Record<Step, Array<number>>,
  unexpected: {} as Record<string, number>,
  failures: 0,
  completed: 0
})
type Tally = ReturnType<typeof makeTally>

/** One person's flow; a step's answer not the one expected is counted in `unexpected` and ends it. */
const flow = async (index: number, tally: Tally): Promise<void> => {
  const email = `flow${index}@${hosts[index % hosts.length]}`
  const path = `/verify/${offerId}?redirect_uri=${encodeURIComponent(`${SHOP}/back`)}&state=s${index}`
  let cookie = ""
  let form = { csrf: "", action: path }
  const step = async (name: Step, expected: number, answer: Promise<Answer>) => {
    const got = await answer
    tally.latencies[name].push(got.ms)
    for (const set of got.cookies) cookie = set.split(";")[0]!
    if (got.status === 200) {
      form = {
        csrf: /name="csrf" value="([^"]*)"/.exec(got.body)?.[1] ?? form.csrf,
        action: (/<form method="post" action="([^"]*)"/.exec(got.body)?.[1] ?? form.action).replaceAll("&amp;", "&")
      }
    }
    const redirectOk = name !== "code" || got.location?.startsWith(`${SHOP}/back?`) === true
    if (got.status !== expected || !redirectOk) {
      const key = `${name} ${got.status}`
      tally.unexpected[key] = (tally.unexpected[key] ?? 0) + 1
      throw new Error(key)
    }
    return got
  }
  const post = (values: Record<string, string>) =>
    call("POST", form.action, cookie, new URLSearchParams({ csrf: form.csrf, ...values }).toString())
  try {
    await step("firstPage", 200, call("GET", path, cookie))
    const back = await step("address", 303, post({ action: "start", email }))
    await step("codePage", 200, call("GET", back.location!, cookie))
    const code = await codeFor(email.toLowerCase())
    await step("code", 303, post({ action: "confirm", code }))
    tally.completed++
  } catch {
    tally.failures++
  }
}

/** Starts `rate` flows a second for `runSeconds`, whatever the answers, from `first` on; resolves when all ended. */
const flowsAt = async (first: number, runSeconds: number) => {
  const tally = makeTally()
  const total = Math.round(rate * runSeconds)
  const running: Array<Promise<void>> = []
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / rate - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    running.push(flow(first + i, tally))
  }
  const startSeconds = (performance.now() - started) / 1000
  await Promise.all(running)
  return { tally, total, startSeconds, allSeconds: (performance.now() - started) / 1000 }
}

/** `GET /healthz` at `rate` requests a second for `runSeconds`. */
const baselineAt = async (runSeconds: number) => {
  const latencies: Array<number> = []
  let unexpected = 0
  const total = Math.round(rate * runSeconds)
  const running: Array<Promise<void>> = []
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / rate - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    running.push(
      call("GET", "/healthz", "").then(
        (answer) => {
          latencies.push(answer.ms)
          if (answer.status !== 200) unexpected++
        },
        () => void unexpected++
      )
    )
  }
  await Promise.all(running)
  return { latencyMs: percentiles(latencies), unexpected }
}

const percentiles = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) =>
    sorted.length === 0
      ? 0
      : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! * 100) / 100
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), count: sorted.length }
}

try {
  log(`warm-up: ${warmUpSeconds} s of flows and of /healthz at ${rate}/s`)
  const warm = await flowsAt(0, warmUpSeconds)
  await baselineAt(warmUpSeconds)
  log(`baseline: GET /healthz at ${rate}/s for ${seconds} s`)
  const baseline = await baselineAt(seconds)
  log(`baseline: p50 ${baseline.latencyMs.p50} ms, p99 ${baseline.latencyMs.p99} ms`)
  log(`flows: ${rate}/s for ${seconds} s`)
  const cpuBefore = cpuSeconds(daemon.child.pid)
  const measured = await flowsAt(warm.total, seconds)
  const cpuAfter = cpuSeconds(daemon.child.pid)
  const steps = Object.fromEntries(STEPS.map((name) => [name, percentiles(measured.tally.latencies[name])])) as Record<
    Step,
    ReturnType<typeof percentiles>
  >
  for (const name of STEPS)
    log(
      `${name}: p50 ${steps[name].p50} ms, p90 ${steps[name].p90} ms, p99 ${steps[name].p99} ms, max ${steps[name].max} ms`
    )
  const unexpected = Object.values(measured.tally.unexpected).reduce((sum, n) => sum + n, 0)
  // The offer's funnel as its status says (the flush interval is 1 s; the daemon reads its pending counts too).
  const status = (await (
    await fetch(`${daemon.url}/api/v1/offers/${offerId}/status`, { headers: { authorization: `Bearer ${dirs.key}` } })
  ).json()) as { usage: { hostedFlow: Record<string, number> } }
  const loadAfter = loadavg()[0]!
  daemon.child.kill("SIGTERM")
  const exitCode = await daemon.exited
  const ratio = (step: Step) =>
    baseline.latencyMs.p99 === 0 ? null : Math.round((steps[step].p99 / baseline.latencyMs.p99) * 10) / 10
  console.log(
    JSON.stringify({
      rate,
      seconds,
      smtpSecurity: security,
      mailConcurrency,
      flows: measured.total,
      flowsCompleted: measured.tally.completed,
      achievedFlowsPerSecond: Math.round((measured.total / measured.startSeconds) * 10) / 10,
      completedFlowsPerSecond: Math.round((measured.tally.completed / measured.allSeconds) * 10) / 10,
      unexpected,
      unexpectedByStep: measured.tally.unexpected,
      /** Flows that did not reach the redirect: an unexpected answer, a connection error or no message. */
      failedFlows: measured.tally.failures,
      p99Ms: Object.fromEntries(STEPS.map((name) => [name, steps[name].p99])),
      baselineP99Ms: baseline.latencyMs.p99,
      p99OverBaseline: Object.fromEntries(STEPS.map((name) => [name, ratio(name)])),
      steps,
      baseline: baseline.latencyMs,
      baselineUnexpected: baseline.unexpected,
      daemonCpuMsPerFlow:
        cpuBefore === undefined || cpuAfter === undefined
          ? null
          : Math.round(((cpuAfter - cpuBefore) * 1000 * 100) / measured.total) / 100,
      funnel: status.usage.hostedFlow,
      details: {
        node: process.version,
        cpus: availableParallelism(),
        loadBefore: Math.round(loadBefore * 100) / 100,
        loadAfter: Math.round(loadAfter * 100) / 100,
        warmUpFlows: warm.total,
        warmUpUnexpected: warm.tally.failures,
        daemonExitCode: exitCode,
        uptime: execFileSync("uptime", { encoding: "utf8" }).trim()
      }
    })
  )
} finally {
  agent.destroy()
  if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM")
  sink.postMessage("close")
  rmSync(root, { recursive: true, force: true })
}
