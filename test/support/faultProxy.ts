/**
 * A TCP proxy on loopback that injects the faults a store's network has:
 * latency on every chunk, a stall (the server paused: connections stay
 * open, nothing flows, as with `kill -STOP`), dropped connections, a
 * partition (new connections refused while it lasts), and lost replies (the
 * server did the work, the connection drops before its answer arrives: a
 * write the client cannot know the outcome of). Tests put it between
 * the daemon and Redis or PostgreSQL to check what the daemon promises when
 * its store misbehaves, without touching the shared server itself.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"

export interface FaultProxy {
  /** `host:port` of the proxy. */
  readonly port: number
  /** The upstream URL with its host and port replaced by the proxy's. */
  readonly url: (upstream: string) => string
  /** Adds `ms` to every chunk in each direction (0: none). */
  latency(ms: number): void
  /** Stops all traffic, connections kept open, until `resume`. */
  stall(): void
  resume(): void
  /** Closes every open connection (new ones are accepted). */
  drop(): void
  /** Drops every connection and refuses new ones until `heal`. */
  partition(): void
  heal(): void
  /**
   * The next `times` chunks from the server that `match` are not delivered:
   * their connection drops instead, as if the network failed just after
   * the server answered. Resolves once all of them were lost.
   */
  loseReplies(match: (chunk: Buffer) => boolean, times?: number): Promise<void>
  close(): Promise<void>
}

export const startFaultProxy = (upstream: { readonly host: string; readonly port: number }): Promise<FaultProxy> =>
  new Promise((resolve, reject) => {
    let delay = 0
    let stalled = false
    let partitioned = false
    const pairs = new Set<readonly [Socket, Socket]>()
    const waiting = new Set<() => void>()
    let losing: { match: (chunk: Buffer) => boolean; left: number; done: () => void } | undefined

    const forward = (from: Socket, to: Socket, fromServer: boolean) => {
      from.on("data", (chunk: Buffer) => {
        if (fromServer && losing?.match(chunk)) {
          if (--losing.left === 0) {
            losing.done()
            losing = undefined
          }
          from.destroy()
          to.destroy()
          return
        }
        const send = () => {
          if (stalled) {
            from.pause()
            waiting.add(() => {
              from.resume()
              send()
            })
            return
          }
          if (!to.destroyed) to.write(chunk)
        }
        if (delay > 0) setTimeout(send, delay)
        else send()
      })
    }

    const server: Server = createServer((client) => {
      if (partitioned) {
        client.destroy()
        return
      }
      const target = createConnection(upstream)
      const pair = [client, target] as const
      pairs.add(pair)
      const end = () => {
        pairs.delete(pair)
        client.destroy()
        target.destroy()
      }
      client.on("error", end).on("close", end)
      target.on("error", end).on("close", end)
      forward(client, target, false)
      forward(target, client, true)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (address === null || typeof address === "string") return reject(new Error("no port"))
      const dropAll = () => {
        for (const [client, target] of pairs) {
          client.destroy()
          target.destroy()
        }
        pairs.clear()
      }
      resolve({
        port: address.port,
        url: (url) => {
          const parsed = new URL(url)
          parsed.hostname = "127.0.0.1"
          parsed.port = String(address.port)
          return parsed.toString()
        },
        latency: (ms) => {
          delay = ms
        },
        stall: () => {
          stalled = true
        },
        resume: () => {
          stalled = false
          const resumed = [...waiting]
          waiting.clear()
          for (const go of resumed) go()
        },
        drop: dropAll,
        partition: () => {
          partitioned = true
          dropAll()
        },
        heal: () => {
          partitioned = false
        },
        loseReplies: (match, times = 1) =>
          new Promise((done) => {
            losing = { match, left: times, done }
          }),
        close: () =>
          new Promise((done) => {
            dropAll()
            server.close(() => done())
          })
      })
    })
  })
