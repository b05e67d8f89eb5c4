/**
 * Child process of the atomic-write crash test: rewrites one target-group
 * document in the data directory's file store as fast as it can,
 * alternating two versions, until it is killed.
 */
import { writeResourceFile } from "../../src/resources/resourceFiles.ts"
import { targetGroupDocument } from "../../src/resources/resourceYaml.ts"

const dataDir = process.argv[2]!
const padding = "x".repeat(200_000)
const versions = ["first", "second"].map((name) =>
  targetGroupDocument({
    id: "crash" as never,
    name,
    description: `${name} ${padding}`,
    criteria: { institutions: { includeSuffixRules: true }, email: {} as never }
  } as never)
)
process.stdout.write("ready\n")
for (let i = 0; ; i++) writeResourceFile(dataDir, "targetGroup", "crash", versions[i % 2]!)
