/**
 * How every store port's contract suite is declared, once: `storeContract`
 * takes the port's name and the suite's body (given a maker of a fresh
 * adapter layer) and answers `contract(adapter, makeLayer, suite?)`, which
 * declares `<port> contract: <adapter>` — in a plain `describe`, or in
 * `describeRedis` for a Redis adapter (skipped loudly without a server,
 * `redisTesting.ts`).
 */
import { everywhere, type Suite } from "./redisTesting.ts"

export const storeContract =
  <L>(port: string, body: (makeLayer: () => L) => void) =>
  (adapter: string, makeLayer: () => L, suite: Suite = everywhere): void =>
    suite(`${port} contract: ${adapter}`, () => body(makeLayer))
