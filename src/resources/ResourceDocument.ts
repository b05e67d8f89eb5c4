/**
 * What the resource store keeps: each API-created target group or offer as
 * its YAML document (the config directory's format), by kind and id, with
 * where it lives for the problems that name it.
 */
export type ResourceKind = "targetGroup" | "offer"

/** One stored resource: its YAML text and where it lives (a file, or a key in another store). */
export interface ResourceDocument {
  readonly kind: ResourceKind
  readonly id: string
  readonly location: string
  readonly text: string
}
