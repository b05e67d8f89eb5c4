/**
 * Revocations of config-directory keys held in a shared store (Redis,
 * PostgreSQL): the config directory's `api-keys.yaml` is kept in git and
 * deployed to every daemon, so a key it defines that was revoked through
 * the API is recorded in the store and applied to that file's document when
 * it is handed to the config loader — every daemon refuses the key without
 * waiting for a deployment.
 */
import { parseDocument, YAMLMap, YAMLSeq } from "yaml"

/** The config file's document with `revoked` applied to the keys it holds that are not revoked there. */
export const withRevocations = (text: string, revoked: ReadonlyMap<string, string>): string => {
  if (revoked.size === 0) return text
  const document = parseDocument(text)
  const keys = document.get("keys")
  if (!(keys instanceof YAMLSeq)) return text
  let changed = false
  for (const item of keys.items) {
    if (!(item instanceof YAMLMap)) continue
    const at = revoked.get(String(item.get("id")))
    if (at !== undefined && !item.has("revokedAt")) {
      item.set("revokedAt", at)
      changed = true
    }
  }
  return changed ? document.toString() : text
}
