/**
 * `npm run build` step 3: writes the JSON Schema documents of the config
 * files into `dist/schemas/` (generated, never committed), where the
 * `# yaml-language-server: $schema=...` line of each example config file
 * points. Prints what it wrote as one JSON line.
 */
import { fileURLToPath } from "node:url"
import { writeJsonSchemas } from "../src/config/jsonSchema.ts"

const outDir = fileURLToPath(new URL("../dist/schemas/", import.meta.url))
console.log(JSON.stringify({ built: outDir, schemas: writeJsonSchemas(outDir).length }))
