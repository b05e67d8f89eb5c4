/**
 * The worker thread of `loadConfigThread.ts`: loads each configuration it is
 * sent and answers the result. Decoded documents are kept between loads,
 * so a change decodes only the documents that changed.
 */
import { parentPort } from "node:worker_threads"
import { type ConfigLocation, type DataDocuments, loadConfig } from "./loadConfig.ts"
import { DecodeCache } from "./yamlDecode.ts"

const cache = new DecodeCache()

parentPort?.on("message", (message: { location: ConfigLocation; data: DataDocuments }) => {
  parentPort!.postMessage(loadConfig(message.location, message.data, { cache }))
})
