/**
 * Child process of the atomic-write crash test: rewrites one target-group
 * file in the data directory as fast as it can, alternating two versions,
 * until it is killed.
 */
import { saveTargetGroup } from "../../src/store/resourceFiles.ts"

const dataDir = process.argv[2]!
const padding = "x".repeat(200_000)
const versions = ["first", "second"].map((name) => ({
  id: "crash" as never,
  name,
  description: `${name} ${padding}`,
  criteria: { institutions: { includeSuffixRules: true }, email: {} as never }
}))
process.stdout.write("ready\n")
for (let i = 0; ; i++) saveTargetGroup(dataDir, versions[i % 2] as never)
