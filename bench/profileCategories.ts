/**
 * Where a server's CPU time goes, by category: the self time of a V8
 * `.cpuprofile` (`node --cpu-prof`), its samples counted and weighed by the
 * sampling interval, summed over HTTP (node:http, sockets,
 * streams), auth, rate limit, decode, engine, serialise, log line, metrics,
 * the Effect runtime, the request glue (routing, request id, the fast path's
 * own code), GC, native time outside JavaScript ("program") and other; idle
 * time is left out. `npm run bench:http` prints it for the daemon and the
 * essential server when BENCH_CPU_PROF is set; alone:
 * `node bench/profileCategories.ts FILE.cpuprofile [answers]` prints the
 * table on standard error and one JSON line on standard output (with
 * `answers`, the requests the profile covers, also µs an answer).
 *
 * A frame is placed by the module its code came from (its URL) and, for a
 * few functions whose self time is mostly one builtin (`JSON.parse` inside
 * the fast path's `evaluate`), by its name; a native frame without a URL
 * (a socket write, a hash) takes its caller's category; Node's own code
 * (streams, fs, timers) called by the log or the metrics is theirs (the
 * log's writes are log-line time, not HTTP). Random UUIDs (request ids) are
 * request glue. The modules are
 * named only when the code is loaded module by module: the shipped bundle
 * (`dist/daemon/`) keeps function names but not modules, so bench:http
 * profiles the module-by-module build (`dist/cli/bin.js`) of the same code.
 */
import { readFileSync } from "node:fs"

export const CATEGORIES = [
  "http",
  "auth",
  "rateLimit",
  "decode",
  "engine",
  "serialise",
  "logLine",
  "metrics",
  "effectRuntime",
  "requestGlue",
  "gc",
  "program",
  "other"
] as const
export type Category = (typeof CATEGORIES)[number]

interface CallFrame {
  readonly functionName: string
  readonly url: string
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  /** Microseconds of the monotonic clock (`process.hrtime`'s), as each timestamp. */
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Module patterns (tested in order against the frame's URL) and their category. */
const BY_MODULE: ReadonlyArray<readonly [RegExp, Category]> = [
  [/\/node_modules\/effect\/.*(Metric|metric|Prometheus)/, "metrics"],
  [/\/node_modules\/effect\/.*(Schema|schema|Parser|AST)/, "decode"],
  [/\/node_modules\/effect\//, "effectRuntime"],
  [/\/observability\/|\/server\/RequestLogger\./, "logLine"],
  [/\/server\/(metrics|runtimeMetrics)\./, "metrics"],
  [/\/server\/rateLimit/, "rateLimit"],
  [/^node:internal\/crypto\/random/, "requestGlue"],
  [
    /\/server\/(credentials|authorization|consoleSession)\.|\/api\/Authorization\.|\/keys\/|^node:(internal\/)?crypto/,
    "auth"
  ],
  [/\/server\/(plainPayloads|requestErrors)\./, "decode"],
  [/\/server\/(resultJson|jsonBytes|problemResponse|problemOf)\.|\/domain\/(ResultRow|rowText)\./, "serialise"],
  [/\/engine\/|\/app\/Validation\.|\/domain\//, "engine"],
  [
    /\/server\/(fastPath|fastEndpoints|routes|requestId|requestIds|NodeServer|http)\.|\/server\/handlers\/|\/api\/problems\.|\/bench\/essentialServer\./,
    "requestGlue"
  ],
  [/^node:(_http|net|stream|events|buffer|internal\/(http|streams|stream_base|net|dtrace))/, "http"],
  [/^node:/, "other"]
]

/** Functions whose self time is mostly one builtin of another category. */
const BY_FUNCTION: ReadonlyArray<readonly [RegExp, RegExp, Category]> = [
  [/\/server\/fastPath\./, /^(evaluate|utf8Text)$/, "decode"],
  [/\/bench\/essentialServer\./, /^(single|bulk)$/, "decode"]
]

const categoryOfFrame = (frame: CallFrame): Category | undefined => {
  const { url, functionName } = frame
  if (functionName === "(garbage collector)") return "gc"
  if (functionName === "(program)") return "program"
  if (url === "") return undefined
  for (const [module, name, category] of BY_FUNCTION) if (module.test(url) && name.test(functionName)) return category
  for (const [pattern, category] of BY_MODULE) if (pattern.test(url)) return category
  return "other"
}

export interface CategorySummary {
  /** Sampled time that was not idle, in milliseconds. */
  readonly busyMs: number
  /** Self time by category, in milliseconds. */
  readonly ms: Record<Category, number>
  /** Share of the busy time by category, in percent. */
  readonly percent: Record<Category, number>
  /** The heaviest functions of each category by self time: `name (module)`, ms. */
  readonly top: Record<Category, ReadonlyArray<readonly [string, number]>>
}

/** A span of the monotonic clock, in microseconds (`process.hrtime.bigint() / 1000n`). */
export type Span = readonly [from: number, to: number]

/** The self time of `profile` summed by category, over the samples within `spans` (all of them without). */
export const summariseProfile = (profile: CpuProfile, spans?: ReadonlyArray<Span>): CategorySummary => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const categoryOf = new Map<number, Category>()
  const isNodeOwn = (id: number) => {
    const { url } = byId.get(id)!.callFrame
    return url === "" || url.startsWith("node:")
  }
  /** The category of the nearest caller that is not Node's own code, if it is the log's or the metrics'. */
  const callerOwner = (id: number): Category | undefined => {
    for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
      if (isNodeOwn(up)) continue
      const category = resolve(up)
      return category === "logLine" || category === "metrics" ? category : undefined
    }
    return undefined
  }
  const resolve = (id: number): Category => {
    const known = categoryOf.get(id)
    if (known !== undefined) return known
    const node = byId.get(id)!
    const up = parent.get(id)
    const own = categoryOfFrame(node.callFrame)
    const category =
      own === "gc" || own === "program"
        ? own
        : ((isNodeOwn(id) ? callerOwner(id) : undefined) ?? own ?? (up === undefined ? "other" : resolve(up)))
    categoryOf.set(id, category)
    return category
  }
  // Each sample weighs the sampling interval (the median gap between samples), not the gap before it: on a
  // shared machine the process is descheduled at times, and a long gap would land on whatever frame ran next
  // (often a call that handed work to another thread, such as an fs.write).
  const gaps = [...profile.timeDeltas].sort((a, b) => a - b)
  const interval = gaps[gaps.length >> 1] ?? 0
  const selfUs = new Map<number, number>()
  let time = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0
    if (spans !== undefined && !spans.some(([from, to]) => time >= from && time <= to)) continue
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + interval)
  }
  const ms = Object.fromEntries(CATEGORIES.map((category) => [category, 0])) as Record<Category, number>
  const functions = new Map<string, { category: Category; name: string; us: number }>()
  let busyUs = 0
  for (const [id, us] of selfUs) {
    const { functionName, url } = byId.get(id)!.callFrame
    if (functionName === "(idle)" || functionName === "(root)") continue
    const category = resolve(id)
    busyUs += us
    ms[category] += us / 1000
    const name = `${functionName || "(anonymous)"} (${url.split("/").slice(-2).join("/")})`
    const entry = functions.get(`${category} ${name}`) ?? { category, name, us: 0 }
    entry.us += us
    functions.set(`${category} ${name}`, entry)
  }
  const top = Object.fromEntries(CATEGORIES.map((category) => [category, [] as Array<[string, number]>])) as Record<
    Category,
    Array<[string, number]>
  >
  for (const { category, name, us } of [...functions.values()].sort((a, b) => b.us - a.us))
    if (top[category].length < 4) top[category].push([name, Math.round(us / 100) / 10])
  const round = (value: number) => Math.round(value * 10) / 10
  return {
    busyMs: round(busyUs / 1000),
    ms: Object.fromEntries(CATEGORIES.map((c) => [c, round(ms[c])])) as Record<Category, number>,
    percent: Object.fromEntries(
      CATEGORIES.map((c) => [c, busyUs === 0 ? 0 : round((ms[c] * 100_000) / busyUs)])
    ) as Record<Category, number>,
    top
  }
}

/** The summaries of several servers side by side, one row a category (ms, %, and µs an answer when known). */
export const categoryTable = (
  columns: ReadonlyArray<{
    readonly name: string
    readonly summary: CategorySummary
    readonly answers?: number | undefined
  }>
): string => {
  const cell = (column: (typeof columns)[number], category: Category) => {
    const { ms, percent } = column.summary
    const perAnswer = column.answers === undefined ? "" : ` ${((ms[category] * 1000) / column.answers).toFixed(2)} µs`
    return `${ms[category].toFixed(0)} ms ${percent[category].toFixed(1)}%${perAnswer}`.padStart(28)
  }
  const lines = [`${"category".padEnd(14)}${columns.map((c) => c.name.padStart(28)).join("")}`]
  for (const category of CATEGORIES)
    lines.push(`${category.padEnd(14)}${columns.map((c) => cell(c, category)).join("")}`)
  lines.push(`${"busy".padEnd(14)}${columns.map((c) => `${c.summary.busyMs.toFixed(0)} ms`.padStart(28)).join("")}`)
  return lines.join("\n")
}

/** The `.cpuprofile` at `path`, summarised (over `spans` only, when given). */
export const summariseProfileFile = (path: string, spans?: ReadonlyArray<Span>): CategorySummary =>
  summariseProfile(JSON.parse(readFileSync(path, "utf8")) as CpuProfile, spans)

if (import.meta.main) {
  const [path, answers] = process.argv.slice(2)
  if (path === undefined) throw new Error("usage: node bench/profileCategories.ts FILE.cpuprofile [answers]")
  const summary = summariseProfileFile(path)
  const column = {
    name: path.split("/").at(-1)!,
    summary,
    ...(answers === undefined ? {} : { answers: Number(answers) })
  }
  console.error(categoryTable([column]))
  for (const category of CATEGORIES)
    if (summary.top[category].length > 0)
      console.error(`${category}: ${summary.top[category].map(([name, ms]) => `${name} ${ms} ms`).join(", ")}`)
  console.log(JSON.stringify({ file: path, ...summary }))
}
