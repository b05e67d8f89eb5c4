/**
 * What a store connection's TLS trusts and presents beyond the system's
 * defaults (`store.tls`, read from the config directory by
 * `deployment/stores.ts`): a private CA, and a client certificate with its
 * key for servers that ask for one. PEM text.
 */
export interface TlsMaterial {
  readonly ca?: string | undefined
  readonly cert?: string | undefined
  readonly key?: string | undefined
}

/** The options of `tls.connect` that `material` sets (the server's certificate is always checked). */
export const tlsOptions = (material: TlsMaterial) => ({
  rejectUnauthorized: true,
  ...(material.ca === undefined ? {} : { ca: material.ca }),
  ...(material.cert === undefined ? {} : { cert: material.cert }),
  ...(material.key === undefined ? {} : { key: material.key })
})
