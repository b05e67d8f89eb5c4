/** The package's version, as its `package.json` says. */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { packageRoot } from "./packageRoot.ts"

export const VERSION: string = (
  JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { readonly version: string }
).version
