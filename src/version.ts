/** The package's version, as `package.json` says it (the same file sits one level up from `src/` and `dist/`). */
import { createRequire } from "node:module"

export const VERSION: string = (createRequire(import.meta.url)("../package.json") as { readonly version: string })
  .version
