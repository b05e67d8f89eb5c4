/**
 * Several child processes started together, for tests of what daemons
 * sharing a store do at once: each child (a `.ts` script Node runs as is)
 * prints `ready` once it has connected, waits for a line on its stdin, then
 * does its work and prints one JSON line, its answer. `together` starts
 * them all, lets them go at the same moment, and answers their answers.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

interface Child {
  readonly ready: Promise<void>
  readonly answer: Promise<unknown>
  go(): void
}

const start = (script: URL, args: ReadonlyArray<string>): Child => {
  const child = spawn(process.execPath, [fileURLToPath(script), ...args], { stdio: ["pipe", "pipe", "inherit"] })
  const lines: Array<string> = []
  let buffered = ""
  let onReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8")
    const parts = buffered.split("\n")
    buffered = parts.pop()!
    for (const line of parts) {
      if (line === "ready") onReady()
      else lines.push(line)
    }
  })
  const answer = new Promise<unknown>((resolve, reject) => {
    child.once("error", reject)
    child.once("exit", (code) => {
      const last = lines.at(-1)
      if (code === 0 && last !== undefined) resolve(JSON.parse(last))
      else reject(new Error(`${fileURLToPath(script)} ${args.join(" ")} exited with ${code}: ${lines.join("\n")}`))
    })
  })
  // A child that dies before it is ready fails the wait for it too.
  return { ready: Promise.race([ready, answer.then(() => undefined)]), answer, go: () => child.stdin.end("go\n") }
}

/** Starts a child per argument list, lets them all go once every one is ready, and answers their answers in order. */
export const together = async (
  script: URL,
  argLists: ReadonlyArray<ReadonlyArray<string>>
): Promise<Array<unknown>> => {
  const children = argLists.map((args) => start(script, args))
  await Promise.all(children.map((child) => child.ready))
  for (const child of children) child.go()
  return Promise.all(children.map((child) => child.answer))
}

/** In a child: says `ready` and waits for the word to go. */
export const readyAndWait = (): Promise<void> =>
  new Promise((resolve) => {
    process.stdout.write("ready\n")
    process.stdin.once("data", () => resolve())
  })
