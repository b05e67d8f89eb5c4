/**
 * `npm run bench:limits`: proof of ownership's limits under concurrent
 * requests, as an attacker sends them (all at once, not one after
 * another), against the built daemon: on files (one daemon) and on Redis
 * (two daemons sharing 127.0.0.1:6379, or BENCH_REDIS_URL, under a key prefix
 * of the run's own, deleted after). Each figure counts what was accepted
 * against the limit:
 * - `messages`: 50 starts for one address on an offer that allows 5 messages
 *   an hour (the default): starts accepted;
 * - `guesses`: then 10 wrong codes at once against each verification those
 *   starts made: wrong codes evaluated ("wrong code" answers, and the last
 *   attempt of each that failed for them; 5 attempts each by design);
 * - `crossTeam`: team acme sends 5 messages to an address; is team globex,
 *   on its own offer, then refused a message to it?
 * - `mailbox`: 50 starts for one address across two teams' offers that each
 *   allow 1000 messages an hour: messages accepted (a deployment-wide cap
 *   per mailbox bounds this);
 * - `redemptions`: an offer that one person may redeem once; ten pending
 *   verifications for them (plus-tag variants of one address), all
 *   confirmed at once with their right codes: verifications that ended
 *   verified.
 * With BENCH_BEFORE_TREE=DIR (another checkout, built) the same runs go
 * against that checkout's daemon too. Progress on standard error; the final
 * line on standard output is JSON.
 */
import { execFileSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseDocument } from "yaml"
import { createApiKey } from "../src/app/Keys.ts"
import { allScopes } from "../src/domain/ApiKey.ts"
import type { TeamId } from "../src/domain/Identifiers.ts"
import { readOutbox } from "../src/verification/outbox.ts"
import { beforeTree, type DaemonProcess, prepareConfig, startDaemon } from "./daemonProcess.ts"

const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"
const log = (message: string) => console.error(message)

interface Node {
  readonly daemon: DaemonProcess
  readonly dataDir: string
}

/** Which settings only this checkout knows: the deployment-wide mailbox cap is new with the limits' fix. */
const knowsMailboxCap = (tree: string | undefined) =>
  readFileSync(join(tree ?? join(import.meta.dirname, ".."), "src", "config", "Settings.ts"), "utf8").includes(
    "maxMessagesPerMailbox"
  )

const offer = (id: string, team: string, verification: Record<string, unknown>) =>
  `${JSON.stringify({ id, team, name: id, targetGroups: ["universities"], status: "active", verification })}\n`

/** Deletes the run's keys from the shared Redis server. */
const deleteRedisKeys = (prefix: string) => {
  const keys = execFileSync("redis-cli", ["-u", redisUrl, "--scan", "--pattern", `${prefix}*`], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
  for (let at = 0; at < keys.length; at += 500)
    execFileSync("redis-cli", ["-u", redisUrl, "DEL", ...keys.slice(at, at + 500)])
}

const request = async (url: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) }
}

/** The code of a verification's latest message, from whichever daemon's outbox holds it (waits for it). */
const codeOf = async (nodes: ReadonlyArray<Node>, id: string): Promise<string> => {
  const deadline = Date.now() + 20_000
  for (;;) {
    for (const node of nodes) {
      const [message] = await readOutbox(join(node.dataDir, "outbox"), 1, id)
      const code = message === undefined ? undefined : /\b(\d{6,10})\b/.exec(message.text)?.[1]
      if (code !== undefined) return code
    }
    if (Date.now() > deadline) throw new Error(`no message for ${id}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** One store kind: its daemons started on a fresh copy of the config, the scenarios run, the daemons stopped. */
const measure = async (kind: "files" | "redis", tree: string | undefined) => {
  const root = mkdtempSync(join(tmpdir(), `campusgate-bench-limits-${kind}-`))
  const prefix = `cgbench:${process.pid}:${Date.now()}:`
  const settings: Array<readonly [ReadonlyArray<string>, unknown]> = [
    [["rateLimits", "verifications", "requests"], 1_000_000_000]
  ]
  if (kind === "redis") settings.push([["store"], { kind: "redis", url: redisUrl, keyPrefix: prefix }])
  const base = prepareConfig(join(root, "a"), allScopes, settings, tree)
  const globex = createApiKey({ ...base, team: "globex" as TeamId, scopes: [...allScopes] }).key
  const offers = join(base.configDir, "offers")
  writeFileSync(join(offers, "races-messages.yaml"), offer("races-messages", "acme", {}))
  writeFileSync(join(offers, "races-globex.yaml"), offer("races-globex", "globex", {}))
  writeFileSync(
    join(offers, "races-open.yaml"),
    offer("races-open", "acme", { maxMessagesPerAddress: 1000, resendAfter: "1 second" })
  )
  writeFileSync(
    join(offers, "races-globex-open.yaml"),
    offer("races-globex-open", "globex", { maxMessagesPerAddress: 1000, resendAfter: "1 second" })
  )
  writeFileSync(
    join(offers, "races-once.yaml"),
    offer("races-once", "acme", { maxVerificationsPerAddress: 1, maxMessagesPerAddress: 1000 })
  )
  if (knowsMailboxCap(tree)) {
    const file = join(base.configDir, "campusgate.yaml")
    const document = parseDocument(readFileSync(file, "utf8"))
    document.setIn(["verification", "mail", "maxMessagesPerMailbox"], 10)
    writeFileSync(file, document.toString())
  }
  const dirs = [base]
  if (kind === "redis") {
    const second = { ...base, configDir: join(root, "b", "config"), dataDir: join(root, "b", "data") }
    cpSync(base.configDir, second.configDir, { recursive: true })
    dirs.push(second)
  }
  const nodes: Array<Node> = []
  try {
    for (const [n, dir] of dirs.entries())
      nodes.push({ daemon: await startDaemon(dir, join(root, `daemon-${n}.log`)), dataDir: dir.dataDir })
    const key = { acme: base.key, globex }
    const at = (i: number) => nodes[i % nodes.length]!.daemon.url
    const start = (i: number, team: "acme" | "globex", email: string, offerId: string) =>
      request(at(i), key[team], "POST", "/api/v1/verifications", { email, offerId })
    const burst = <A>(count: number, one: (i: number) => Promise<A>) =>
      Promise.all(Array.from({ length: count }, (_, i) => one(i)))
    const accepted = (answers: ReadonlyArray<{ status: number }>) => answers.filter((a) => a.status === 201).length

    log(`${kind}: 50 starts for one address at once (5 an hour allowed)`)
    const messageStarts = await burst(50, (i) => start(i, "acme", "bomb@ox.ac.uk", "races-messages"))
    const started = messageStarts.filter((a) => a.status === 201).map((a) => String(a.body!.id))

    log(`${kind}: 10 wrong codes at once against each of the ${started.length} verifications`)
    const guesses = await burst(started.length * 10, (i) =>
      request(at(i), key.acme, "POST", `/api/v1/verifications/${started[i % started.length]}/confirm`, {
        code: String(100000 + i).padStart(6, "0")
      })
    )
    // Evaluated: each "wrong code" answer, and the last attempt of each verification that failed for it.
    const failed = await Promise.all(
      started.map((id, i) => request(at(i), key.acme, "GET", `/api/v1/verifications/${id}`))
    )
    const evaluated =
      guesses.filter((a) => a.body?.code === "INVALID_CODE").length +
      failed.filter((a) => a.body?.failureReason === "TOO_MANY_ATTEMPTS").length

    log(`${kind}: team acme sends 5 messages to an address; then team globex on its own offer`)
    for (let i = 0; i < 5; i++) await start(i, "acme", "shared@ox.ac.uk", "races-messages")
    const globexAnswer = await start(0, "globex", "shared@ox.ac.uk", "races-globex")

    log(`${kind}: 50 starts for one address across two teams' offers (1000 an hour each)`)
    const mailboxStarts = await burst(50, (i) =>
      i % 2 === 0
        ? start(i, "acme", "mailbox@ox.ac.uk", "races-open")
        : start(i, "globex", "mailbox@ox.ac.uk", "races-globex-open")
    )

    log(`${kind}: 10 pending verifications of one person, confirmed at once (1 redemption allowed)`)
    const pending: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const answer = await start(i, "acme", `jane+${i}@ox.ac.uk`, "races-once")
      if (answer.status === 201) pending.push(String(answer.body!.id))
    }
    const codes = await Promise.all(pending.map((id) => codeOf(nodes, id)))
    const confirms = await burst(pending.length, (i) =>
      request(at(i), key.acme, "POST", `/api/v1/verifications/${pending[i]}/confirm`, { code: codes[i] })
    )
    const verified = confirms.filter((a) => a.status === 200 && a.body?.status === "verified").length
    return {
      daemons: nodes.length,
      messages: { sent: 50, accepted: accepted(messageStarts), limit: 5 },
      guesses: { sent: guesses.length, evaluated, limit: 25 },
      crossTeam: { acmeSent: 5, globexStatus: globexAnswer.status, globexCode: globexAnswer.body?.code ?? null },
      mailbox: { sent: 50, accepted: accepted(mailboxStarts) },
      redemptions: { pending: pending.length, confirmed: confirms.length, verified, limit: 1 }
    }
  } finally {
    for (const node of nodes) {
      node.daemon.child.kill("SIGTERM")
      await node.daemon.exited
    }
    if (kind === "redis") deleteRedisKeys(prefix)
    rmSync(root, { recursive: true, force: true })
  }
}

const runs: Record<string, unknown> = {}
for (const [name, tree] of [
  ["after", undefined],
  ...(beforeTree === undefined ? [] : [["before", beforeTree]])
] as const) {
  runs[name] = { files: await measure("files", tree), redis: await measure("redis", tree) }
}
console.log(JSON.stringify(beforeTree === undefined ? runs.after : runs))
