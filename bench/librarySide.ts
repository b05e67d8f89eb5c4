/**
 * One checkout's library in a process of its own, for `npm run bench` with
 * BENCH_BEFORE_TREE (bench/library.ts): `node bench/librarySide.ts TREE
 * EMAILS_FILE` builds TREE's bench engine (its `bench/benchEngine.ts` on its
 * own data) and reads the emails (one JSON string a line). For each line on
 * its standard input it then validates every email against the bench target
 * group, as the library loop of bench/library.ts does, and answers on a line
 * of standard output: `{"ms": <the pass's wall-clock milliseconds>,
 * "cpuMs": <the process CPU milliseconds it took>, "checksum": <the valid
 * count>}`. It ends when its input does.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { pathToFileURL } from "node:url"

const [tree, emailsFile] = process.argv.slice(2)
if (tree === undefined || emailsFile === undefined) throw new Error("usage: librarySide.ts TREE EMAILS_FILE")

const from = (path: string) => import(pathToFileURL(join(tree, path)).href)
const { buildInstitutionTable } = await from("src/engine/InstitutionIndex.ts")
const { evaluateTargetGroup } = await from("src/engine/targeting/evaluateTargetGroup.ts")
const { BENCH_TARGET_GROUP, makeBenchEngine } = await from("bench/benchEngine.ts")
const engine = makeBenchEngine(buildInstitutionTable())
const group = engine.targetGroups.get(BENCH_TARGET_GROUP)
const emails = readFileSync(emailsFile, "utf8")
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line) as string)

const validate = (input: ReadonlyArray<string>): number => {
  let valid = 0
  for (let i = 0; i < input.length; i++) if (evaluateTargetGroup(group, engine.context, input[i]!).isValid) valid++
  return valid
}

for await (const _ of createInterface({ input: process.stdin })) {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const checksum = validate(emails)
  const spent = process.cpuUsage(cpu)
  const ms = performance.now() - started
  process.stdout.write(`${JSON.stringify({ ms, cpuMs: (spent.user + spent.system) / 1000, checksum })}\n`)
}
