/**
 * One API-written item (a target group, an offer, an API key) changed in a
 * loaded configuration, without loading the rest again: the item's new
 * document is decoded with the loader's own schema and decoder, put in
 * place of the old one (or removed), and the whole result is checked with
 * the loader's cross-reference rules (`references.ts`: teams declared, an
 * offer's target groups present and visible to its team).
 *
 * The guarantee: a change is applied here only when a full load of the
 * same store would accept it and give the same configuration. Whenever that
 * cannot be known here — the item failed to decode, a rule objects, the item
 * is defined in the config directory, an offer names a page logo not read
 * yet, a client names an offer being deleted, the same id twice — the
 * answer is `undefined`: load in full, which refuses (or accepts) with the
 * loader's own words. So a refused change reads exactly as before.
 */
import { readFileSync, statSync } from "node:fs"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { type ApiKeyRecord, ApiKeyRecord as ApiKeyRecordSchema } from "../domain/ApiKey.ts"
import type { ConfigurationProblem } from "../domain/errors.ts"
import { Offer } from "../domain/Offer.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"
import { displayPath } from "./layout.ts"
import type { LoadedConfig } from "./loadConfig.ts"
import { checkTargetGroups, checkTeams, type References, type SourceFile } from "./references.ts"
import { decodeYaml } from "./yamlDecode.ts"

/** Which item changed: what a change feed carries and an API write names. */
export interface ItemRef {
  readonly kind: "targetGroup" | "offer" | "apiKey"
  readonly id: string
}

/** An item as its store holds it now (absent: deleted). */
export type ItemState =
  | {
      readonly kind: "targetGroup" | "offer"
      readonly id: string
      readonly document: { readonly location: string; readonly text: string } | undefined
    }
  | {
      readonly kind: "apiKey"
      readonly id: string
      /** Every record the store holds under the id (more than one: the full load decides). */
      readonly records: ReadonlyArray<{ readonly record: ApiKeyRecord; readonly file: SourceFile }>
    }

/** `targetGroup:x` — an item as the change feeds carry it. */
export const itemText = (item: ItemRef): string => `${item.kind}:${item.id}`

/** The item `itemText` wrote, or undefined for anything else. */
export const parseItem = (text: string): ItemRef | undefined => {
  const colon = text.indexOf(":")
  const kind = text.slice(0, colon)
  if (colon < 0 || (kind !== "targetGroup" && kind !== "offer" && kind !== "apiKey")) return undefined
  return { kind, id: text.slice(colon + 1) }
}

/** The configuration with `states` applied; `unchanged` when it already held them. */
export type ItemsApplied = { readonly config: LoadedConfig; readonly unchanged: boolean }

const decodeRecord = Schema.decodeUnknownExit(ApiKeyRecordSchema)

type Origins = ReadonlyMap<string, SourceFile>

/** `config` with `states` applied, or undefined when only a full load can tell (see the module's comment). */
export const applyItems = (config: LoadedConfig, states: ReadonlyArray<ItemState>): ItemsApplied | undefined => {
  let next = config
  let unchanged = true
  for (const state of states) {
    const applied = state.kind === "apiKey" ? applyKey(next, state) : applyResource(next, state)
    if (applied === undefined) return undefined
    if (applied !== next) unchanged = false
    next = applied
  }
  return unchanged ? { config, unchanged } : checked(next) ? { config: next, unchanged } : undefined
}

const without = <A extends { readonly id: string }>(items: ReadonlyArray<A>, id: string) =>
  items.filter((item) => item.id !== id)

/** `items` with `item` in place of the one of its id, or after the others. */
const withItem = <A extends { readonly id: string }>(items: ReadonlyArray<A>, item: A): ReadonlyArray<A> => {
  const at = items.findIndex((existing) => existing.id === item.id)
  return at < 0 ? [...items, item] : items.map((existing, i) => (i === at ? item : existing))
}

const originsWith = (origins: Origins, id: string, file: SourceFile | undefined): Origins => {
  const next = new Map(origins)
  if (file === undefined) next.delete(id)
  else next.set(id, file)
  return next
}

const applyResource = (
  config: LoadedConfig,
  state: Extract<ItemState, { readonly kind: "targetGroup" | "offer" }>
): LoadedConfig | undefined => {
  const group = state.kind === "targetGroup"
  const origins = group ? config.origins.targetGroups : config.origins.offers
  const origin = origins.get(state.id)
  // The config directory's items change in git, through a full load.
  if (origin?.store === "config") return undefined
  const { document } = state
  if (document === undefined) {
    if (origin === undefined) return config
    // A client that names a deleted offer: the loader words the problem.
    if (!group && (config.clients ?? []).some((client) => client.allowedOffers.some((offer) => offer === state.id)))
      return undefined
    return group
      ? {
          ...config,
          targetGroups: without(config.targetGroups, state.id),
          origins: { ...config.origins, targetGroups: originsWith(origins, state.id, undefined) }
        }
      : {
          ...config,
          offers: without(config.offers, state.id),
          origins: { ...config.origins, offers: originsWith(origins, state.id, undefined) }
        }
  }
  if (origin !== undefined && origin.path === document.location && origin.text === document.text) return config
  const file: SourceFile = { store: "data", path: document.location, text: document.text }
  const path = displayPath(file.path)
  if (group) {
    const decoded = decodeYaml(TargetGroup, path, document.text)
    if (!decoded.ok || decoded.value.id !== state.id) return undefined
    return {
      ...config,
      targetGroups: withItem(config.targetGroups, decoded.value),
      origins: { ...config.origins, targetGroups: originsWith(origins, state.id, file) }
    }
  }
  const decoded = decodeYaml(Offer, path, document.text)
  if (!decoded.ok || decoded.value.id !== state.id) return undefined
  // A logo file no offer named before is read by the full load.
  const logo = decoded.value.verification?.page?.logo
  if (logo !== undefined && config.pageLogos?.has(logo) !== true) return undefined
  return {
    ...config,
    offers: withItem(config.offers, decoded.value),
    origins: { ...config.origins, offers: originsWith(origins, state.id, file) }
  }
}

const applyKey = (
  config: LoadedConfig,
  state: Extract<ItemState, { readonly kind: "apiKey" }>
): LoadedConfig | undefined => {
  if (state.records.length > 1) return undefined
  const held = state.records[0]
  const origin = config.origins.apiKeys.get(state.id)
  const current = config.apiKeys.find((record) => record.id === state.id)
  if (held === undefined) {
    if (current === undefined) return config
    if (origin?.store === "config") return undefined
    return {
      ...config,
      apiKeys: without(config.apiKeys, state.id),
      origins: { ...config.origins, apiKeys: originsWith(config.origins.apiKeys, state.id, undefined) }
    }
  }
  const decoded = decodeRecord(held.record)
  if (Exit.isFailure(decoded) || decoded.value.id !== state.id) return undefined
  if (origin !== undefined && origin.path !== held.file.path) return undefined
  if (
    current !== undefined &&
    origin?.text === held.file.text &&
    JSON.stringify(current) === JSON.stringify(decoded.value)
  )
    return config
  // Every key of the file holding it is read from the file's text as it is now.
  const apiKeys = new Map<string, SourceFile>()
  for (const [id, file] of config.origins.apiKeys) apiKeys.set(id, file.path === held.file.path ? held.file : file)
  apiKeys.set(state.id, held.file)
  return { ...config, apiKeys: withItem(config.apiKeys, decoded.value), origins: { ...config.origins, apiKeys } }
}

/** Whether the loader's cross-reference rules hold for the whole of `config` (no problem to word). */
const checked = (config: LoadedConfig): boolean => {
  const problems: Array<ConfigurationProblem> = []
  const fileOf = (origins: Origins, id: string): SourceFile => origins.get(id) ?? { store: "data", path: id, text: "" }
  const referencesOf = (
    origins: Origins,
    item: { readonly id: string; readonly team?: string | undefined; readonly targetGroups?: ReadonlyArray<string> }
  ): References => ({
    file: fileOf(origins, item.id),
    at: [],
    team: item.team,
    targetGroups: item.targetGroups ?? []
  })
  const targetGroups = new Map(config.targetGroups.map((group) => [group.id, { value: group }]))
  if (targetGroups.size !== config.targetGroups.length) return false
  if (new Set(config.offers.map((offer) => offer.id)).size !== config.offers.length) return false
  if (new Set(config.apiKeys.map((key) => key.id)).size !== config.apiKeys.length) return false
  const context = { teams: config.teams, targetGroups, brokenTargetGroups: new Set<string>() }
  const offers = config.offers.map((offer) => referencesOf(config.origins.offers, offer))
  checkTeams(
    context,
    [
      ...config.targetGroups.map((group) => referencesOf(config.origins.targetGroups, group)),
      ...config.apiKeys.map((key) => referencesOf(config.origins.apiKeys, { id: key.id, team: key.team })),
      ...offers
    ],
    problems
  )
  checkTargetGroups(context, offers, problems)
  return problems.length === 0
}

/**
 * Whether the files at `paths` hold what `config` already serves: each a
 * file an item was read from, with the text it was read with; or gone, with
 * no item read from it; or a directory (its files are reported apart). The
 * watcher then has nothing to reload: so it is after the daemon's own API
 * write, which its snapshot applied as it answered.
 */
export const filesServed = (config: LoadedConfig, paths: ReadonlyArray<string>): boolean => {
  const texts = new Map<string, Set<string>>()
  for (const origins of [config.origins.targetGroups, config.origins.offers, config.origins.apiKeys])
    for (const file of origins.values()) {
      const known = texts.get(file.path)
      if (known === undefined) texts.set(file.path, new Set([file.text]))
      else known.add(file.text)
    }
  return paths.every((path) => {
    let text: string
    try {
      if (statSync(path).isDirectory()) return true
      text = readFileSync(path, "utf8")
    } catch {
      return !texts.has(path)
    }
    return texts.get(path)?.has(text) === true
  })
}
