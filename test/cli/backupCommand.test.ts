/**
 * `campusgate backup` and `restore` as an operator runs them, against a
 * daemon on Redis (the test server, a key prefix of the test's own): a
 * token issued before the backup still verifies, and the verification is
 * still found by its address, after every key of the prefix was deleted
 * and the archive restored — on the daemon that stayed up (which held off
 * the emptied store, answering STORE_LOST, until the restore wrote the
 * store's identity back), and on one started after. Mistakes (a wrong passphrase, a store that holds data)
 * are told in one line, with no secret and no password printed.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { redisStoreLayer } from "../../src/store/redis.ts"
import { verifyEligibilityToken } from "../../src/verification/eligibilityToken.ts"
import { deleteKeys, describeRedis, testRedisUrl } from "../redisTesting.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, within } from "../server/daemon.ts"
import { codeOf, makeCertificate, startSmtp, type TestSmtp } from "../server/smtpServer.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const PASSPHRASE = "a passphrase for the test backups"
const OFFER = "acme-student-discount"

describeRedis("campusgate backup and restore with a daemon on Redis", () => {
  const prefix = `cgbackup:${randomBytes(6).toString("hex")}:`
  const wipe = () =>
    Effect.runPromise(
      deleteKeys(prefix).pipe(Effect.provide(redisStoreLayer({ url: testRedisUrl, keyPrefix: prefix })))
    )
  let smtp: TestSmtp
  let dirs: { configDir: string; dataDir: string }
  let key: string
  const daemons: Array<Daemon> = []

  /** Runs the command line; answers its exit status and everything it printed. */
  const campusgate = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const ran = spawnSync(process.execPath, [main, ...args, "--config", dirs.configDir, "--data", dirs.dataDir], {
      encoding: "utf8",
      env: { ...process.env, CAMPUSGATE_CONFIG: "", CAMPUSGATE_DATA: "", ...env }
    })
    return { status: ran.status, output: `${ran.stdout}${ran.stderr}` }
  }

  beforeAll(async () => {
    const certificate = await makeCertificate()
    smtp = await startSmtp(certificate)
    dirs = copyConfig()
    writeFileSync(join(dirs.configDir, "smtp-ca.pem"), certificate.cert)
    setSettings(dirs, [
      [
        ["verification", "mail"],
        {
          from: "Acme <offers@acme.example>",
          smtp: { host: "127.0.0.1", port: smtp.port, security: "starttls", ca: "smtp-ca.pem" }
        }
      ],
      [["store"], { kind: "redis", url: testRedisUrl, keyPrefix: prefix }]
    ])
    key = makeKey(dirs, "acme", allScopes)
    daemons.push(await startDaemon(dirs))
  }, 60_000)

  afterAll(async () => {
    await Promise.all(daemons.map((daemon) => daemon.stop()))
    await smtp?.close()
    await wipe()
  })

  it("a token issued before the backup verifies after the store was wiped and restored; the address is found again", async () => {
    const [daemon] = daemons as [Daemon]
    const before = smtp.received.length
    const started = await call(daemon, "POST", "/api/v1/verifications", {
      key,
      body: { email: "ada@ox.ac.uk", offerId: OFFER }
    })
    expect(started.status).toBe(201)
    const mail = (await smtp.waitFor(before + 1))[before]!
    const verified = await call(daemon, "POST", `/api/v1/verifications/${started.body.id}/confirm`, {
      key,
      body: { code: codeOf(mail) }
    })
    const token = verified.body.eligibility.token as string
    const lookup = (on: Daemon) =>
      call(on, "GET", `/api/v1/verifications?email=${encodeURIComponent("ADA@ox.ac.uk")}&offerId=${OFFER}`, { key })

    const archive = join(dirs.dataDir, "..", "backup.cgb")
    const backedUp = campusgate(["backup", "--to", archive], { CAMPUSGATE_BACKUP_PASSPHRASE: PASSPHRASE })
    expect(backedUp.status, backedUp.output).toBe(0)
    const made = JSON.parse(backedUp.output)
    expect(made).toMatchObject({ backedUp: { verifications: 1, signingKeys: 1 }, to: archive })
    expect(made.backedUp.secrets).toBeGreaterThanOrEqual(3)
    expect(made.from).toContain(`(prefix ${prefix})`)

    await wipe()
    // The daemon notices the store came back empty and holds off it (nothing minted into it) until the restore.
    await within(async () => {
      const answer = await call(daemon, "GET", `/api/v1/verifications/${started.body.id}`, { key })
      return answer.status === 503 && answer.body.code === "STORE_LOST"
    }, 5_000)

    const passphraseFile = join(dirs.dataDir, "..", "passphrase")
    writeFileSync(join(dirs.dataDir, "..", "wrong-passphrase"), "not the passphrase at all\n")
    const wrong = campusgate([
      "restore",
      "--from",
      archive,
      "--passphrase-file",
      join(dirs.dataDir, "..", "wrong-passphrase")
    ])
    expect(wrong.status).not.toBe(0)
    expect(wrong.output).toContain("the passphrase does not open this backup")

    writeFileSync(passphraseFile, `${PASSPHRASE}\n`)
    const restored = campusgate(["restore", "--from", archive, "--passphrase-file", passphraseFile])
    expect(restored.status, restored.output).toBe(0)
    expect(JSON.parse(restored.output)).toMatchObject({
      restored: { verifications: 1, signingKeys: 1 },
      archive: { kind: "redis" }
    })

    // The daemon that stayed up (once it has seen the store's identity back), and one started after, both know
    // the verification and the keys that signed it.
    daemons.push(await startDaemon(dirs))
    for (const on of daemons) {
      await within(async () => (await lookup(on)).status === 200, 5_000)
      expect((await lookup(on)).body.current).toMatchObject({ id: started.body.id, status: "verified" })
      const claims = await verifyEligibilityToken(token, { jwksUrl: `${on.url}/.well-known/jwks.json`, offerId: OFFER })
      expect(claims).toMatchObject({ jti: started.body.id })
    }

    const again = campusgate(["restore", "--from", archive, "--passphrase-file", passphraseFile])
    expect(again.status).not.toBe(0)
    expect(again.output).toContain("already holds data")
    expect(again.output).not.toContain(PASSPHRASE)
  }, 60_000)
})
