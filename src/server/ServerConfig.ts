/**
 * The configuration the server answers from: the live config (hot
 * reloaded) and, per snapshot, the index of its API keys.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { ApiKeyIndex } from "../config/apiKeys.ts"
import type { ConfigSnapshot, LiveConfig, ReloadOutcome, ReloadStatus } from "../config/LiveConfig.ts"

export class ServerConfig extends Context.Service<
  ServerConfig,
  {
    /** The snapshot in force: read it once per request. */
    current(): ConfigSnapshot
    /** The API keys of the snapshot in force. */
    keys(): ApiKeyIndex
    status(): ReloadStatus
    /**
     * Loads the directories again now and applies the result only if it is
     * valid: an API write calls it so the change serves before the answer.
     */
    reload(): ReloadOutcome
  }
>()("campusgate/server/ServerConfig") {
  static readonly layer = (live: LiveConfig): Layer.Layer<ServerConfig> => {
    const indexes = new WeakMap<ConfigSnapshot, ApiKeyIndex>()
    const keys = (): ApiKeyIndex => {
      const snapshot = live.current()
      let index = indexes.get(snapshot)
      if (index === undefined) {
        index = new ApiKeyIndex(snapshot.config.apiKeys)
        indexes.set(snapshot, index)
      }
      return index
    }
    return Layer.succeed(
      ServerConfig,
      ServerConfig.of({
        current: () => live.current(),
        keys,
        status: () => live.status(),
        reload: () => live.reload()
      })
    )
  }
}
