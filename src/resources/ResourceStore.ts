/**
 * Where target groups and offers created through the API are kept: a port
 * with a file adapter (the data directory, the embedded default) and a
 * memory adapter, and a Redis adapter (`resourceRedis.ts`) and a
 * PostgreSQL adapter (`resourcePostgres.ts`) for daemons that share state.
 * The store keeps each resource as its YAML document, the format of the
 * config directory, so a resource can be promoted into git by
 * moving it and every store is decoded by the one config loader (with
 * file, line and column in its problems). A write replaces one document
 * atomically and durably before it returns; a failure is a
 * `ResourceStoreError` (the store is unavailable: answer 503) and changed
 * nothing.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { markOutage } from "../store/outage.ts"
import type { ResourceDocument, ResourceKind } from "./ResourceDocument.ts"
import { listResourceFiles, readResourceFile, removeResourceFile, writeResourceFile } from "./resourceFiles.ts"

export type { ResourceDocument, ResourceKind } from "./ResourceDocument.ts"

export class ResourceStoreError extends Schema.TaggedError<ResourceStoreError>()("ResourceStoreError", {
  operation: Schema.Literals(["list", "read", "write", "remove"]),
  id: Schema.optionalKey(Schema.String),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const what = this.id === undefined ? "" : ` of "${this.id}"`
    return `The resource store failed to ${this.operation}${what}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}
markOutage(ResourceStoreError)

/** The file adapter's service for `dataDir`. */
const makeFiles = (dataDir: string): ResourceStore["Service"] => ({
  list: (kind) =>
    Effect.try({
      try: () => listResourceFiles(dataDir, kind),
      catch: (cause) => new ResourceStoreError({ operation: "list", cause })
    }),
  read: (kind, id) =>
    Effect.try({
      try: () => readResourceFile(dataDir, kind, id),
      catch: (cause) => new ResourceStoreError({ operation: "read", id, cause })
    }),
  // One process owns a data directory (and `Resources` makes one change at a time), so the comparison and
  // the write cannot be interleaved by another writer.
  write: (kind, id, text, expected) =>
    Effect.try({
      try: () => {
        if (expected !== undefined && (readResourceFile(dataDir, kind, id)?.text ?? null) !== expected) return false
        writeResourceFile(dataDir, kind, id, text)
        return true
      },
      catch: (cause) => new ResourceStoreError({ operation: "write", id, cause })
    }),
  remove: (kind, id) =>
    Effect.try({
      try: () => removeResourceFile(dataDir, kind, id),
      catch: (cause) => new ResourceStoreError({ operation: "remove", id, cause })
    })
})

export class ResourceStore extends Context.Service<
  ResourceStore,
  {
    /** Every stored document of a kind, in id order. */
    list(kind: ResourceKind): Effect.Effect<ReadonlyArray<ResourceDocument>, ResourceStoreError>
    /** The document stored under `id`, whether or not it decodes; undefined when there is none. */
    read(kind: ResourceKind, id: string): Effect.Effect<ResourceDocument | undefined, ResourceStoreError>
    /**
     * Creates or replaces the document under `id`, atomically and durably.
     * With `expected`, only when the stored document is that text (`null`:
     * none is stored): answers false, changing nothing, when another writer
     * came first — how two daemons sharing a store cannot both create one
     * id, or both change one version.
     */
    write(
      kind: ResourceKind,
      id: string,
      text: string,
      expected?: string | null
    ): Effect.Effect<boolean, ResourceStoreError>
    /** Removes the document under `id` (nothing when there is none). */
    remove(kind: ResourceKind, id: string): Effect.Effect<void, ResourceStoreError>
  }
>()("campusgate/resources/ResourceStore") {
  /** Documents in this process's memory: lost when it ends. */
  static readonly layerMemory: Layer.Layer<ResourceStore> = Layer.sync(ResourceStore, () => {
    const documents = new Map<string, ResourceDocument>()
    const keyOf = (kind: ResourceKind, id: string) => `${kind}/${id}`
    return ResourceStore.of({
      list: (kind) =>
        Effect.sync(() =>
          [...documents.values()].filter((document) => document.kind === kind).sort((a, b) => (a.id < b.id ? -1 : 1))
        ),
      read: (kind, id) => Effect.sync(() => documents.get(keyOf(kind, id))),
      write: (kind, id, text, expected) =>
        Effect.sync(() => {
          if (expected !== undefined && (documents.get(keyOf(kind, id))?.text ?? null) !== expected) return false
          documents.set(keyOf(kind, id), { kind, id, location: `memory:${keyOf(kind, id)}`, text })
          return true
        }),
      remove: (kind, id) =>
        Effect.sync(() => {
          documents.delete(keyOf(kind, id))
        })
    })
  })

  /** The file adapter's service for `dataDir`. */
  static readonly makeFiles = makeFiles

  /** One YAML file per resource under the data directory (`target-groups/<id>.yaml`, `offers/<id>.yaml`). */
  static readonly layerFiles = (dataDir: string): Layer.Layer<ResourceStore> =>
    Layer.succeed(ResourceStore, makeFiles(dataDir))
}
