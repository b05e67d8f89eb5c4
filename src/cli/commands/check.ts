/**
 * `campusgate check [dir]`: validates a config directory the way the daemon
 * loads it — every file against its schema, every cross-reference — then
 * runs each target group's examples through the real engine. Exit 0 when
 * all is well, 1 otherwise. Output for people (default), for machines
 * (`--format json`) or as GitHub annotations on the pull request
 * (`--format github`). The institution index is loaded only when there are
 * examples to run.
 */

import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EngineBuilder } from "../../app/EngineBuilder.ts"
import { loadDirectory } from "../../app/sources.ts"
import type { LoadedConfig } from "../../config/loadConfig.ts"
import { type ExamplesReport, runExamples } from "../../config/runExamples.ts"
import { type ConfigurationProblem, formatProblem, InvalidConfiguration } from "../../domain/errors.ts"
import { configDirFlag, dataDirFlag } from "../options.ts"

type Format = "human" | "json" | "github"

interface CheckReport {
  readonly ok: boolean
  readonly configDir: string
  readonly problems: ReadonlyArray<ConfigurationProblem>
  readonly examples: ExamplesReport
  readonly counts?: { readonly targetGroups: number; readonly offers: number; readonly apiKeys: number }
}

const check = (configDir: string, dataDir: string | undefined): CheckReport => {
  const loaded = loadDirectory({ configDir, dataDir })
  const noExamples: ExamplesReport = { checked: 0, mismatches: [] }
  if (!loaded.ok) return { ok: false, configDir, problems: loaded.problems, examples: noExamples }
  const config: LoadedConfig = loaded.config
  const counts = {
    targetGroups: config.targetGroups.length,
    offers: config.offers.length,
    apiKeys: config.apiKeys.length
  }
  const hasExamples = config.targetGroups.some(
    (g) => (g.examples?.valid.length ?? 0) + (g.examples?.invalid.length ?? 0) > 0
  )
  if (!hasExamples) return { ok: true, configDir, problems: [], examples: noExamples, counts }
  const engine = new EngineBuilder().engineFor(config)
  if (engine instanceof InvalidConfiguration) {
    return { ok: false, configDir, problems: engine.problems, examples: noExamples, counts }
  }
  const examples = runExamples(config, engine)
  return { ok: examples.mismatches.length === 0, configDir, problems: [], examples, counts }
}

/** GitHub workflow commands: `%`, CR and LF escaped in the message; also `:` and `,` in properties. */
const escapeData = (text: string): string => text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A")
const escapeProperty = (text: string): string => escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C")

const annotation = (problem: ConfigurationProblem): string => {
  const properties = [
    ...(problem.file === undefined ? [] : [`file=${escapeProperty(problem.file)}`]),
    ...(problem.line === undefined ? [] : [`line=${problem.line}`]),
    ...(problem.column === undefined ? [] : [`col=${problem.column}`]),
    "title=campusgate check"
  ]
  return `::error ${properties.join(",")}::${escapeData(`${problem.path === "" ? "" : `${problem.path}: `}${problem.message}`)}`
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

const render = (report: CheckReport, format: Format): string => {
  const all: ReadonlyArray<ConfigurationProblem> = [...report.problems, ...report.examples.mismatches]
  if (format === "json") return JSON.stringify(report, null, 2)
  if (format === "github") {
    const lines = all.map(annotation)
    if (report.ok) lines.push(`::notice title=campusgate check::${summary(report)}`)
    return lines.join("\n")
  }
  const lines = all.map(formatProblem)
  lines.push(report.ok ? `ok: ${summary(report)}` : `failed: ${summary(report)}`)
  return lines.join("\n")
}

const summary = (report: CheckReport): string => {
  if (!report.ok) {
    const parts = [
      report.problems.length > 0 ? plural(report.problems.length, "problem") : "",
      report.examples.mismatches.length > 0
        ? `${plural(report.examples.mismatches.length, "example")} of ${report.examples.checked} not as expected`
        : ""
    ].filter((part) => part !== "")
    return `${parts.join(", ")} in ${report.configDir}`
  }
  const counts = report.counts!
  return `${plural(counts.targetGroups, "target group")}, ${plural(counts.offers, "offer")}, ${plural(counts.apiKeys, "API key")}; ${plural(report.examples.checked, "example")} as expected`
}

export const checkCommand = Command.make(
  "check",
  {
    dir: Argument.String("dir").pipe(
      Argument.withDescription("The config directory to check (default: --config, CAMPUSGATE_CONFIG or ./config)"),
      Argument.optional
    ),
    format: Flag.Literals("format", ["human", "json", "github"]).pipe(
      Flag.withDescription("human (default), json, or github (workflow annotations)"),
      Flag.withDefault("human" as const)
    ),
    config: configDirFlag,
    data: dataDirFlag
  },
  Effect.fn("check")(function* ({ dir, format, config, data }) {
    const report = yield* Effect.try({
      try: () =>
        check(
          Option.getOrElse(dir, () => config),
          Option.getOrUndefined(data)
        ),
      catch: (error) => new CliError.UserError({ cause: error, userMessage: (error as Error).message })
    })
    const text = render(report, format)
    if (text !== "") console.log(text)
    if (!report.ok) process.exitCode = 1
  })
).pipe(
  Command.withDescription(
    "Check a config directory: every file, every cross-reference, and each target group's examples through the real engine"
  )
)
