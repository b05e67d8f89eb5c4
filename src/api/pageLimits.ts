/**
 * How many items a page of a list endpoint holds: the default and the
 * most a `limit` may ask. A module with no imports, so the console's
 * bundle can read the same bounds as the contract (`resources.ts`).
 */
export const PAGE_LIMIT_DEFAULT = 50
export const PAGE_LIMIT_MAX = 100
