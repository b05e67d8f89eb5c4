/** The institution table both sides of `npm run bench:rows` build their engines on, built once. */
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"

export const sharedTable = buildInstitutionTable()
