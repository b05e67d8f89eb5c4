/**
 * Where a snapshot's configuration comes from: a config directory (kept in
 * git) with what the stores hold — API-created resources and API keys,
 * handed to the config loader as documents — or target groups and offers
 * given in memory (the library). A source loads as an effect, so a store
 * that answers over the network fits; one that cannot be read fails the
 * load like a broken file, and the last good snapshot keeps serving.
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import type { ItemRef, ItemState } from "../config/itemChanges.ts"
import { type ConfigLoad, type ConfigLocation, loadConfig, resolveDataDir } from "../config/loadConfig.ts"
import type { ConfigLoader } from "../config/loadConfigThread.ts"
import { configFromResources, type InMemoryResources } from "../config/resourcesConfig.ts"
import { reviewedKey, reviewedYaml } from "../config/reviewedDatasets.ts"
import type { DatasetSpec } from "../engine/institutions/userDatasets.ts"
import { ApiKeyStore } from "../keys/ApiKeyStore.ts"
import { ResourceStore } from "../resources/ResourceStore.ts"
import type { ReviewStore } from "../reviews/ReviewStore.ts"

/** Where the configuration is read from. */
export interface SnapshotSource {
  /** Reads and checks the configuration now (a store that cannot be read is a problem of the load). */
  readonly load: Effect.Effect<ConfigLoad>
  /** Directories whose changes may change the configuration (watched on request). */
  readonly directories: ReadonlyArray<string>
  /** Reads the items an API write changed as their stores hold them now (absent: every change loads in full). */
  readonly readItems?: ((items: ReadonlyArray<ItemRef>) => Effect.Effect<ReadonlyArray<ItemState>, unknown>) | undefined
}

/** The stores a directory source reads besides the config directory's own files, and how it loads. */
export interface DirectoryStores {
  /** Loads off the calling thread (the daemon: a reload never holds the event loop); default: here, synchronously. */
  readonly loader?: ConfigLoader | undefined
  /** API-created target groups and offers (default: the file store in the data directory). */
  readonly resources?: ResourceStore["Service"] | undefined
  /** API keys (default: the `api-keys.yaml` files of the config and data directories). */
  readonly keys?: ApiKeyStore["Service"] | undefined
  /**
   * The review store: its approvals count as a reviewed dataset and its
   * rejections end what a file still approves (default: none; the reviewed
   * files of both directories are read whatever the store).
   */
  readonly reviews?: ReviewStore["Service"] | undefined
}

/** The problems that say a store could not be read (it is away), not that the configuration is wrong. */
const storeProblems = new WeakSet<object>()

/** Whether `problem` says a store could not be read: a reload to try again once it answers, not a bad change. */
export const isStoreUnreadable = (problem: object): boolean => storeProblems.has(problem)

/** A store that cannot be read fails the load, like a broken file: the last good snapshot keeps serving. */
const unreadable = (path: string) => (error: { readonly message: string }) => {
  const problem = { path, message: error.message }
  storeProblems.add(problem)
  return Effect.fail<ConfigLoad>({ ok: false, problems: [problem] })
}

/** A config directory (read-mostly, kept in git) with what the stores hold. */
export const directorySource = (location: ConfigLocation, stores: DirectoryStores = {}): SnapshotSource => {
  const configDir = resolve(location.configDir)
  const dataDir = resolveDataDir(location)
  const resources = stores.resources ?? ResourceStore.makeFiles(dataDir)
  const keys = stores.keys ?? ApiKeyStore.makeFiles({ configDir, dataDir })
  return {
    load: Effect.gen(function* () {
      const targetGroups = yield* resources.list("targetGroup").pipe(Effect.catch(unreadable("resources")))
      const offers = yield* resources.list("offer").pipe(Effect.catch(unreadable("resources")))
      const apiKeys = yield* keys.documents.pipe(Effect.catch(unreadable("apiKeys")))
      const decisions =
        stores.reviews === undefined
          ? undefined
          : yield* stores.reviews.decisions().pipe(Effect.catch(unreadable("reviews")))
      const documents = {
        targetGroups,
        offers,
        apiKeys,
        ...(decisions === undefined
          ? {}
          : {
              reviewed:
                decisions.approvals.length === 0
                  ? []
                  : [{ location: "review store (approvals)", text: reviewedYaml(decisions.approvals) }],
              reviewedRejected: decisions.rejections.map((rejection) => reviewedKey(rejection.team, rejection.domain))
            })
      }
      const { loader } = stores
      return loader === undefined
        ? loadConfig(location, documents)
        : yield* Effect.promise(() => loader.load(location, documents))
    }).pipe(Effect.catch(Effect.succeed)),
    directories: [configDir, dataDir],
    readItems: (items) =>
      Effect.forEach(items, (item): Effect.Effect<ItemState, unknown> => {
        const { kind } = item
        if (kind !== "apiKey") {
          return Effect.map(resources.read(kind, item.id), (stored) => ({
            kind,
            id: item.id,
            document: stored === undefined ? undefined : { location: stored.location, text: stored.text }
          }))
        }
        // The key's record, with the text of the document holding it (read the way the loader reads it).
        return Effect.map(Effect.all([keys.list, keys.documents]), ([listed, documents]) => ({
          kind: "apiKey" as const,
          id: item.id,
          records: listed
            .filter((entry) => entry.record.id === item.id)
            .map(({ record, location, file }) => ({
              record,
              file: {
                store: location,
                path: file,
                text: documents.find((document) => document.location === file)?.text ?? ""
              }
            }))
        }))
      })
  }
}

/** A config directory with the data directory's files, loaded now (the CLI's `check` and `inspect`). */
export const loadDirectory = (location: ConfigLocation): ConfigLoad => Effect.runSync(directorySource(location).load)

/** Resources given in memory; `replace` swaps them for what the next load reads. */
export interface ResourcesSource extends SnapshotSource {
  replace(resources: InMemoryResources): void
}

export const resourcesSource = (
  resources: InMemoryResources,
  datasets: ReadonlyArray<DatasetSpec> = []
): ResourcesSource => {
  let current = resources
  return {
    load: Effect.sync(() => configFromResources(current, datasets)),
    directories: [],
    replace: (next) => {
      current = next
    }
  }
}
