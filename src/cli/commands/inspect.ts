/**
 * `campusgate inspect`: reads emails or bare domains (arguments, or one per
 * line on standard input) and prints one JSON object per line with the
 * format verdict, the institution (name, country, region, type, matched
 * domain, rule, sources) and the policy flags. Output keeps input order and
 * field names are stable: held-out evaluations read them.
 */
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { extname } from "node:path"
import { createInterface } from "node:readline"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { buildInstitutionTable } from "../../engine/InstitutionIndex.ts"
import { inspectInput } from "../../engine/inspect.ts"
import type { DatasetFormat, DatasetSpec } from "../../engine/institutions/userDatasets.ts"
import { loadBuiltInEmailLists } from "../../engine/policy/EmailLists.ts"
import { type EngineContext, makeEngineContext } from "../../engine/targeting/EngineContext.ts"

const formatByExtension: Record<string, DatasetFormat> = {
  ".json": "hipo",
  ".csv": "csv",
  ".yaml": "yaml",
  ".yml": "yaml"
}

/** Reads a dataset file; the format follows the extension (.json Hipo, .csv, .yaml/.yml). */
export const readDatasetFile = (path: string): DatasetSpec => {
  const format = formatByExtension[extname(path).toLowerCase()]
  if (format === undefined) throw new Error(`${path}: unknown dataset format; use .json (Hipo), .csv or .yaml`)
  return { name: path, format, content: readFileSync(path, "utf8") }
}

const writeLines = async (lines: AsyncIterable<string> | Iterable<string>, context: EngineContext): Promise<void> => {
  const out = process.stdout
  let buffer = ""
  for await (const raw of lines) {
    const line = raw.replace(/\r$/, "")
    if (line.trim() === "") continue
    buffer += `${JSON.stringify(inspectInput(context, line))}\n`
    if (buffer.length > 65_536) {
      if (!out.write(buffer)) await once(out, "drain")
      buffer = ""
    }
  }
  if (buffer !== "" && !out.write(buffer)) await once(out, "drain")
}

export const inspectCommand = Command.make(
  "inspect",
  {
    inputs: Argument.String("email-or-domain").pipe(
      Argument.withDescription("Emails or bare domains; when none are given, lines are read from standard input"),
      Argument.variadic()
    ),
    datasets: Flag.String("dataset").pipe(
      Flag.withDescription("An institution dataset to merge on top of the built-in data (.json Hipo, .csv, .yaml)"),
      Flag.atLeast(0)
    )
  },
  Effect.fn("inspect")(function* ({ inputs, datasets }) {
    const context = yield* Effect.try({
      try: (): EngineContext =>
        makeEngineContext(buildInstitutionTable({ datasets: datasets.map(readDatasetFile) }), loadBuiltInEmailLists()),
      catch: (error) => new CliError.UserError({ cause: error, userMessage: (error as Error).message })
    })
    const source =
      inputs.length > 0 ? inputs : createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    yield* Effect.promise(() => writeLines(source, context))
  })
).pipe(Command.withDescription("Print what Campusgate knows about emails or domains, one JSON object per line"))
