/**
 * `npm run build` step 2: compiles the built-in datasets into `dist/data/`
 * (generated, never committed). Prints what it compiled as one JSON line.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs"
import { builtInDataDir } from "../src/engine/data/builtInData.ts"
import { compileEmailLists } from "./data/emailLists.ts"
import { compileInstitutions } from "./data/institutions.ts"
import { compileSubdivisions } from "./data/subdivisions.ts"

const write = (fileName: string, value: unknown): number => {
  const json = JSON.stringify(value)
  const path = builtInDataDir + fileName
  writeFileSync(`${path}.tmp`, json)
  renameSync(`${path}.tmp`, path)
  return json.length
}

const started = performance.now()
mkdirSync(builtInDataDir, { recursive: true })
const institutions = compileInstitutions()
const bytes = {
  institutions: write("institutions.json", institutions.data),
  emailLists: write("email-lists.json", compileEmailLists()),
  subdivisions: write("subdivisions.json", compileSubdivisions())
}
console.log(
  JSON.stringify({
    built: builtInDataDir,
    ...institutions.report,
    bytes,
    ms: Math.round(performance.now() - started)
  })
)
