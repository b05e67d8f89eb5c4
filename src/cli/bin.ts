#!/usr/bin/env node
/**
 * The `campusgate` executable. It turns on Node's compile cache first, since
 * start-up time is most of a `campusgate check` run in a pre-commit hook,
 * then runs the command line.
 */
import { enableCompileCache } from "node:module"

enableCompileCache?.()
await import("./main.ts")
