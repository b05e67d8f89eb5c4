/**
 * `npm run build` step 2: compiles the built-in datasets into `dist/data/`
 * (generated, never committed), and copies there what `campusgate data
 * import` needs to compile newer source snapshots the same way
 * (`dist/data/sources/`). Prints what it compiled as one JSON line.
 */
import { copyFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { builtInDataDir, builtInSourcesDir } from "../src/engine/data/builtInData.ts"
import { loadSubdivisions } from "../src/engine/institutions/Subdivisions.ts"
import { encodeSnapshot } from "../src/engine/institutions/sources/SourceSnapshot.ts"
import { datasetsDir } from "./data/datasets.ts"
import { compileEmailLists } from "./data/emailLists.ts"
import { compileInstitutions, hipoSnapshot } from "./data/institutions.ts"
import { compileSubdivisions } from "./data/subdivisions.ts"

const writeAtomically = (path: string, content: string | Uint8Array): number => {
  writeFileSync(`${path}.tmp`, content)
  renameSync(`${path}.tmp`, path)
  return content.length
}
const write = (fileName: string, value: unknown): number =>
  writeAtomically(builtInDataDir + fileName, JSON.stringify(value))

const started = performance.now()
mkdirSync(builtInSourcesDir, { recursive: true })
const subdivisions = compileSubdivisions()
const hipo = hipoSnapshot()
const institutions = compileInstitutions(loadSubdivisions(subdivisions), hipo)
const bytes = {
  institutions: write("institutions.json", institutions.data),
  emailLists: write("email-lists.json", compileEmailLists()),
  subdivisions: write("subdivisions.json", subdivisions),
  hipoSnapshot: writeAtomically(join(builtInSourcesDir, "university-domains.json.gz"), encodeSnapshot(hipo))
}
for (const file of ["swot.json.gz", "ror.json.gz", "non-institutions.yaml"]) {
  copyFileSync(join(datasetsDir, file), join(builtInSourcesDir, file))
}
console.log(
  JSON.stringify({
    built: builtInDataDir,
    ...institutions.report,
    bytes,
    ms: Math.round(performance.now() - started)
  })
)
