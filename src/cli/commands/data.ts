/**
 * `campusgate data import|diff`: refresh the institution data without
 * upgrading. `import` compiles newer source snapshots (a swot checkout, a
 * ror-records checkout or a ROR dump) into the data directory, which the
 * daemon and the library then use instead of the built-in index; `diff`
 * lists the domains added, removed, and changed in type or country between
 * two indexes (default: the built-in one and the data directory's import),
 * one JSON object per line, then a summary line.
 */
import { readFileSync } from "node:fs"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { diffInstitutionData, type InstitutionsData } from "../../app/Institutions.ts"
import { dataDirectory } from "../directories.ts"
import { directoryFlags } from "../options.ts"

const attempt = <A>(f: () => A) =>
  Effect.try({
    try: f,
    catch: (error) => new CliError.UserError({ cause: error, userMessage: (error as Error).message })
  })

const optionalText = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)

const importCommand = Command.make(
  "import",
  {
    swot: optionalText("swot", "A JetBrains swot checkout (its root or lib/domains)").pipe(Flag.withMetavar("DIR")),
    swotVersion: optionalText("swot-version", "The swot commit, when the checkout is not a git work tree"),
    swotDate: optionalText("swot-date", "The date of that commit (YYYY-MM-DD)"),
    ror: optionalText(
      "ror",
      "A ror-records checkout (release folders vX.Y/) or a ROR data dump (.json, or the .zip ROR publishes)"
    ).pipe(Flag.withMetavar("PATH")),
    rorVersion: optionalText("ror-version", "The ROR release (vX.Y), when the dump's file name does not say"),
    rorDate: optionalText("ror-date", "The date of that release (YYYY-MM-DD)"),
    ...directoryFlags
  },
  Effect.fn("data.import")(function* (flags) {
    if (Option.isNone(flags.swot) && Option.isNone(flags.ror)) {
      return yield* new CliError.UserError({
        cause: new Error("nothing to import"),
        userMessage: "Give --swot DIR, --ror PATH or both."
      })
    }
    // The compiler and the sources' readers load when an import runs, not at every command's start.
    const { importInstitutionData } = yield* Effect.promise(() => import("../data/importData.ts"))
    const report = yield* attempt(() =>
      importInstitutionData({
        dataDir: dataDirectory(flags.config, flags.data),
        swot: Option.getOrUndefined(flags.swot),
        swotHint: { version: Option.getOrUndefined(flags.swotVersion), date: Option.getOrUndefined(flags.swotDate) },
        ror: Option.getOrUndefined(flags.ror),
        rorHint: { version: Option.getOrUndefined(flags.rorVersion), date: Option.getOrUndefined(flags.rorDate) }
      })
    )
    process.stdout.write(`${JSON.stringify(report)}\n`)
  })
).pipe(
  Command.withDescription(
    "Compile newer institution sources into the data directory; the daemon uses them from its next load"
  )
)

const readIndex = (path: string): InstitutionsData => JSON.parse(readFileSync(path, "utf8")) as InstitutionsData

const diffCommand = Command.make(
  "diff",
  {
    from: optionalText("from", "An index file to compare from (default: the built-in index)").pipe(
      Flag.withMetavar("FILE")
    ),
    to: optionalText("to", "An index file to compare to (default: the data directory's imported index)").pipe(
      Flag.withMetavar("FILE")
    ),
    ...directoryFlags
  },
  Effect.fn("data.diff")(function* (flags) {
    const diff = yield* attempt(() =>
      diffInstitutionData(
        Option.isSome(flags.from) ? readIndex(flags.from.value) : undefined,
        Option.isSome(flags.to) ? readIndex(flags.to.value) : { dataDir: dataDirectory(flags.config, flags.data) }
      )
    )
    let out = ""
    for (const facts of diff.added) out += `${JSON.stringify({ change: "added", ...facts })}\n`
    for (const facts of diff.removed) out += `${JSON.stringify({ change: "removed", ...facts })}\n`
    for (const change of diff.changed) out += `${JSON.stringify({ change: "changed", ...change })}\n`
    out += `${JSON.stringify({ added: diff.added.length, removed: diff.removed.length, changed: diff.changed.length })}\n`
    process.stdout.write(out)
  })
).pipe(Command.withDescription("List the domains added, removed, and changed in type or country between two indexes"))

export const dataCommand = Command.make("data").pipe(
  Command.withDescription("Refresh the institution data without upgrading: import newer sources, review the change"),
  Command.withSubcommands([importCommand, diffCommand])
)
