/**
 * `npm run build` step 2: compiles the built-in datasets into `dist/data/`
 * (generated, never committed): the institution index as gzipped JSON, which user
 * datasets and `campusgate data diff` start from, and in the binary form
 * read at start (`institutions.bin`, `tableBuffer.ts`), and the email
 * lists likewise (`email-lists.json.gz`, `email-lists.bin`). Copies there what
 * `campusgate data import` needs to compile newer source snapshots the same way
 * (`dist/data/sources/`). Prints what it compiled as one JSON line.
 */
import { copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import {
  builtInDataDir,
  builtInEmailListsFile,
  builtInSourcesDir,
  builtInTableFile
} from "../src/engine/data/builtInData.ts"
import { compileCandidateKnowledge } from "../src/engine/institutions/CandidateScorer.ts"
import { loadSubdivisions } from "../src/engine/institutions/Subdivisions.ts"
import { decodeSnapshot, encodeSnapshot, rorSnapshotFormat } from "../src/engine/institutions/sources/SourceSnapshot.ts"
import { encodeTable } from "../src/engine/institutions/tableBuffer.ts"
import { packDisposable } from "../src/engine/policy/EmailLists.ts"
import { encodeEmailLists } from "../src/engine/policy/emailListsBuffer.ts"
import { compileCandidateModel } from "./data/candidateModel.ts"
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
/** JSON only tools and rare paths read (a merge, `data diff`): gzipped, as the package ships it. */
const writeGzipped = (fileName: string, value: unknown): number =>
  writeAtomically(builtInDataDir + fileName, gzipSync(JSON.stringify(value), { level: 9 }))

const started = performance.now()
mkdirSync(builtInSourcesDir, { recursive: true })
const subdivisions = compileSubdivisions()
const hipo = hipoSnapshot()
const institutions = compileInstitutions(loadSubdivisions(subdivisions), hipo)
const emailLists = compileEmailLists()
const candidates = compileCandidateModel({
  institutions: institutions.data,
  ror: decodeSnapshot(readFileSync(join(datasetsDir, "ror.json.gz")), rorSnapshotFormat, "datasets/ror.json.gz"),
  freeMail: emailLists.lists.freeMail.entries.split("\n"),
  disposable: emailLists.lists.disposable.entries.split("\n"),
  subdivisions: loadSubdivisions(subdivisions)
})
const bytes = {
  institutions: writeGzipped("institutions.json.gz", institutions.data),
  // What the daemon and the library read: the same index, ready to use (`tableBuffer.ts`).
  institutionsTable: writeAtomically(
    builtInDataDir + builtInTableFile,
    encodeTable(institutions.data, {
      knowledge: compileCandidateKnowledge(institutions.data, loadSubdivisions(subdivisions))
    })
  ),
  emailLists: writeGzipped("email-lists.json.gz", emailLists),
  // What the daemon and the library read: the same lists, the disposable domains packed (`emailListsBuffer.ts`).
  emailListsPacked: writeAtomically(
    builtInDataDir + builtInEmailListsFile,
    encodeEmailLists(emailLists, packDisposable(emailLists))
  ),
  candidates: write("candidates.json", candidates),
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
    candidates: { auc: candidates.auc, recommended: candidates.recommended, trainedOn: candidates.trainedOn },
    bytes,
    ms: Math.round(performance.now() - started)
  })
)
