/**
 * A loaded config → a compiled engine. The institution index with the
 * config's datasets and the email lists are the costly part (~200 ms), so
 * the engine context is kept and reused while the datasets (and the data
 * directory's imported index) stay the same; a compiled target group is
 * kept while its definition stays the same, so a change recompiles only the
 * groups it touches.
 */
import type { LoadedConfig } from "../config/loadConfig.ts"
import { InvalidConfiguration } from "../domain/errors.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import { importedIndexStamp } from "../engine/data/builtInData.ts"
import { Engine } from "../engine/Engine.ts"
import { buildInstitutionTable } from "../engine/InstitutionIndex.ts"
import type { InstitutionTable } from "../engine/institutions/InstitutionTable.ts"
import { type EmailLists, loadBuiltInEmailLists } from "../engine/policy/EmailLists.ts"
import { type CompiledTargetGroup, compileTargetGroup } from "../engine/targeting/compileTargetGroup.ts"
import { type EngineContext, makeEngineContext } from "../engine/targeting/EngineContext.ts"

/** What of a loaded config the engine is built from (a worker thread is sent just this). */
export type EngineConfig = Pick<LoadedConfig, "dataDir" | "datasets" | "targetGroups" | "offers" | "reviewed">

export interface EngineBuilderOptions {
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
  /** Set to false to use only the config's datasets (default true). */
  readonly builtInInstitutions?: boolean | undefined
  /** Set to false for engines that keep no target group's verdicts on institutions (`EngineContext`; default true). */
  readonly rememberVerdicts?: boolean | undefined
  /** The email lists, when they are given (a job thread: the daemon's, read in shared memory); default: the built-in ones, read. */
  readonly emailLists?: EmailLists | undefined
}

/** Builds engines for successive configs, sharing the engine context while the datasets are unchanged. */
export class EngineBuilder {
  #lists: EmailLists | undefined
  #context: EngineContext | undefined
  #datasetsKey: string | undefined
  /** The compiled target groups of the last engine built, by their definition. */
  #compiled = new Map<string, CompiledTargetGroup>()
  /** Each definition's key, once per object: a change of one item keeps the others' objects, so they are not written out again. */
  readonly #keys = new WeakMap<TargetGroup, string>()
  readonly #options: EngineBuilderOptions

  constructor(options: EngineBuilderOptions = {}) {
    this.#options = options
    this.#lists = options.emailLists
  }

  /**
   * Reads what every engine needs whatever the config (the built-in email
   * lists), ahead of the first `engineFor`: `LiveSnapshot.make` calls it
   * while the configuration loads elsewhere.
   */
  prepare(): void {
    this.#lists ??= loadBuiltInEmailLists()
  }

  /**
   * The context for `config`'s datasets; `table`, when given, makes their
   * institution table instead of reading or compiling it (a job thread: the
   * daemon's, read in shared memory).
   */
  contextFor(config: EngineConfig, table?: () => InstitutionTable): EngineContext {
    // An index imported into the data directory (`campusgate data import`) is taken up on the next load.
    const key = JSON.stringify([
      config.dataDir ?? null,
      importedIndexStamp(config.dataDir) ?? null,
      config.datasets.map((d) => [d.name, d.format, d.content])
    ])
    if (this.#context === undefined || key !== this.#datasetsKey) {
      this.#lists ??= loadBuiltInEmailLists()
      const index =
        table?.() ??
        buildInstitutionTable({
          datasets: config.datasets,
          builtIn: this.#options.builtInInstitutions,
          dataDir: config.dataDir
        })
      this.#context = makeEngineContext(index, this.#lists, { rememberVerdicts: this.#options.rememberVerdicts })
      this.#datasetsKey = key
    }
    return this.#context
  }

  /**
   * The engine for `config` (`table`: as `contextFor`); `InvalidConfiguration`
   * if the engine rejects it (the loader's checks make this rare).
   */
  engineFor(config: EngineConfig, table?: () => InstitutionTable): Engine | InvalidConfiguration {
    return this.#build(config, this.contextFor(config, table), undefined)
  }

  /**
   * The engine for `config`, which differs from `previous`'s only in its
   * target groups, offers or keys (an item changed through the API): its
   * context, the institution index and the teams' approvals are `previous`'s,
   * not looked at again; unchanged target groups keep their compiled form.
   */
  engineAfterChange(previous: Engine, config: EngineConfig): Engine | InvalidConfiguration {
    return this.#build(config, previous.context, previous)
  }

  #build(
    config: EngineConfig,
    context: EngineContext,
    sameContextAs: Engine | undefined
  ): Engine | InvalidConfiguration {
    const compiled = new Map<string, CompiledTargetGroup>()
    const compile = (group: TargetGroup): CompiledTargetGroup => {
      let key = this.#keys.get(group)
      if (key === undefined) {
        key = JSON.stringify(group)
        this.#keys.set(group, key)
      }
      const done = compiled.get(key) ?? this.#compiled.get(key) ?? compileTargetGroup(group)
      compiled.set(key, done)
      return done
    }
    try {
      const engine = Engine.make({
        context,
        sameContextAs,
        targetGroups: config.targetGroups,
        offers: config.offers,
        now: this.#options.now,
        compile,
        reviewed: config.reviewed
      })
      this.#compiled = compiled
      return engine
    } catch (error) {
      if (error instanceof InvalidConfiguration) return error
      throw error
    }
  }
}
