/**
 * `campusgate outbox [--latest N] [--verification ID] [--format text|json]`:
 * prints the latest verification messages written to the outbox directory
 * (the embedded default when no SMTP server is configured), decoded as the
 * recipient reads them, so a code or a link can be read without a mail
 * server. The message parser (`mailparser` and its character sets, ~1.3 MB
 * of code) is loaded when the command runs, not by every command's start:
 * `serve` never needs it.
 */

import { resolve } from "node:path"
import * as Console from "effect/Console"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { dataDirFor, loadSettings } from "../../config/settingsFile.ts"
import { outboxDirectory } from "../../verification/MailTransport.ts"
import { directoryFlags } from "../options.ts"

export const outboxCommand = Command.make(
  "outbox",
  {
    ...directoryFlags,
    latest: Flag.Int("latest").pipe(Flag.withDescription("How many messages (default 1)"), Flag.withDefault(1)),
    verification: Flag.String("verification").pipe(
      Flag.withDescription("Only the messages of this verification id"),
      Flag.optional
    ),
    format: Flag.Literals("format", ["text", "json"]).pipe(
      Flag.withDescription("text (default) or json (one object per line)"),
      Flag.withDefault("text" as const)
    )
  },
  Effect.fn("outbox")(function* ({ config, data, latest, verification, format }) {
    const configDir = resolve(config)
    const { settings } = loadSettings(configDir, process.env, [])
    const dataDir = dataDirFor(configDir, settings, Option.getOrUndefined(data))
    const directory = outboxDirectory(configDir, dataDir, settings.verification.mail.outboxDir)
    const messages = yield* Effect.tryPromise({
      try: async () => {
        const { readOutbox } = await import("../../verification/outbox.ts")
        return readOutbox(directory, Math.max(1, latest), Option.getOrUndefined(verification))
      },
      catch: (error) => new CliError.UserError({ cause: error, userMessage: (error as Error).message })
    })
    if (messages.length === 0) {
      yield* Console.error(`No messages in ${directory}.`)
      return
    }
    for (const message of messages) {
      if (format === "json") yield* Console.log(JSON.stringify(message))
      else {
        yield* Console.log(
          `File: ${message.file}\nDate: ${message.date ?? ""}\nTo: ${message.to}\nSubject: ${message.subject}\n\n${message.text.trimEnd()}\n`
        )
      }
    }
  })
).pipe(Command.withDescription("Print the latest verification messages of the outbox (no SMTP server configured)"))
