/** Where the repository keeps the institution source snapshots and curated lists (`datasets/`). */
import { fileURLToPath } from "node:url"

export const datasetsDir: string = fileURLToPath(new URL("../../datasets/", import.meta.url))
