import { describe, expect, it } from "vitest"
import { subcommands, subcommandsFor } from "../../src/cli/subcommands.ts"

describe("subcommands", () => {
  it("loads each subcommand under the name it runs by", async () => {
    for (const [name, load] of Object.entries(subcommands)) expect((await load()).name).toBe(name)
  }, 60_000)

  it("loads only the subcommand a run names, and every one for help, flags before it or an unknown name", async () => {
    expect((await subcommandsFor(["serve", "--config", "config"])).map((command) => command.name)).toEqual(["serve"])
    const all = Object.keys(subcommands)
    for (const args of [[], ["--help"], ["--log-level", "debug", "serve"], ["srve"], ["toString"]]) {
      expect((await subcommandsFor(args)).map((command) => command.name)).toEqual(all)
    }
  }, 60_000)
})
