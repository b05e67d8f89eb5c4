#!/usr/bin/env node
/** The `campusgate` command: composes the subcommands the run needs (`subcommands.ts`) and runs them on Node. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import { modulesLoadedMark } from "../server/startPhases.ts"
import { VERSION } from "../version.ts"
import { subcommandsFor } from "./subcommands.ts"

const commands = await subcommandsFor(process.argv.slice(2))

// The start's first phase ends here, with every module the command line imports evaluated (`server/startPhases.ts`).
performance.mark(modulesLoadedMark)

const campusgate = Command.make("campusgate").pipe(
  Command.withDescription("Decide whether an email address belongs to the students and educators an offer is for"),
  Command.withSubcommands(commands)
)

// SIGTERM is how a supervisor asks for a clean stop: once in-flight work has drained, that is success (exit 0).
let terminated = false
process.once("SIGTERM", () => {
  terminated = true
})
const teardown: Runtime.Teardown = (exit, onExit) =>
  exit._tag === "Failure" && terminated && Cause.hasInterruptsOnly(exit.cause)
    ? onExit(0)
    : Runtime.defaultTeardown(exit, onExit)

campusgate.pipe(
  Command.run({ version: VERSION }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({ teardown })
)
