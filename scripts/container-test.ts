/**
 * `npm run test:container`: the Docker image, built and run for real.
 *
 * Builds the image from the Dockerfile with buildah (no Docker engine
 * needed; `--isolation chroot`), then starts what the image says to start —
 * its ENTRYPOINT and CMD, as its USER, with its environment and working
 * directory — and checks what an operator relies on:
 * - the daemon answers /healthz, and the bootstrap key it prints validates
 *   an email;
 * - it runs as a user other than root, and that user writes /data (the
 *   bootstrap key is stored there); the image carries no API key of the
 *   checkout it was built from (when one stops the bootstrap key, it says so);
 * - SIGTERM (what `docker stop` sends) ends it with exit code 0;
 * - `docker run IMAGE check /app/config` runs the CLI's check instead.
 * Prints the image size and the times as one final JSON line.
 *
 * Needs root and buildah (`.ci/run` installs it). The base image is
 * `CAMPUSGATE_BASE_IMAGE` if set, else the Dockerfile's own when
 * `CAMPUSGATE_BASE_IMAGE=dockerfile`, else a stand-in built by
 * `.ci/base-image.sh` (no registry is reachable in CI). Behind a proxy that
 * re-signs TLS, `NODE_EXTRA_CA_CERTS` is handed to the build's npm.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, readFileSync, statSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("../", import.meta.url))
const IMAGE = "localhost/campusgate:container-test"
const started = performance.now()
const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10

const run = (command: string, args: ReadonlyArray<string>, options: { quiet?: boolean } = {}): string =>
  execFileSync(command, args, {
    cwd: repo,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", options.quiet === true ? "pipe" : "inherit"]
  }).trim()

const step = (text: string) => console.log(`container-test: ${text}`)

const fail = (message: string): never => {
  throw new Error(`container-test: ${message}`)
}

const check = (holds: boolean, message: string) => {
  if (!holds) fail(message)
  step(`ok: ${message}`)
}

/**
 * Why the image's first start made no bootstrap key: it found keys already,
 * in the image's config (baked in from the build context) or in /data.
 */
const whyNoBootstrap = (pid: number): string => {
  for (const file of ["app/config/api-keys.yaml", "data/api-keys.yaml"]) {
    let text = ""
    try {
      text = readFileSync(`/proc/${pid}/root/${file}`, "utf8")
    } catch {
      continue
    }
    const ids = [...text.matchAll(/^\s*-?\s*id:\s*(key_\w+)/gm)].map((match) => match[1])
    if (ids.length > 0)
      return `the image's /${file} already holds ${ids.length} key(s) (${ids.join(", ")}), so the daemon made none; keys must not be baked into the image (.dockerignore excludes config/api-keys.yaml: was it changed?)`
  }
  return "the image holds no API key either: see the daemon's log lines above"
}

/** A loopback port free now (the chroot isolation shares the host's network). */
const freePort = async (): Promise<number> => {
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  server.close()
  await once(server, "close")
  return typeof address === "object" && address !== null ? address.port : fail("no free port")
}

// --- build ----------------------------------------------------------------------
const baseStarted = performance.now()
const requestedBase = process.env.CAMPUSGATE_BASE_IMAGE
const base =
  requestedBase === "dockerfile"
    ? undefined
    : (requestedBase ??
      run("bash", [join(repo, ".ci", "base-image.sh")])
        .split("\n")
        .at(-1))
const baseSeconds = seconds(baseStarted)
step(`base image: ${base ?? "the Dockerfile's"} (${baseSeconds} s)`)

const buildStarted = performance.now()
const caBundle = process.env.NODE_EXTRA_CA_CERTS
const trust =
  caBundle !== undefined && existsSync(caBundle)
    ? ["--build-arg", `NODE_EXTRA_CA_CERTS=${caBundle}`, "--volume", `${caBundle}:${caBundle}:ro`]
    : []
run("buildah", [
  "bud",
  "--isolation",
  "chroot",
  // The Docker format keeps HEALTHCHECK; OCI has no field for it.
  "--format",
  "docker",
  "--layers",
  ...(base === undefined ? [] : ["--build-arg", `NODE_IMAGE=${base}`]),
  ...trust,
  "--tag",
  IMAGE,
  "."
])
const buildSeconds = seconds(buildStarted)
step(`built ${IMAGE} in ${buildSeconds} s`)

interface ImageConfig {
  readonly User?: string
  readonly Entrypoint?: ReadonlyArray<string>
  readonly Cmd?: ReadonlyArray<string>
  readonly Healthcheck?: { readonly Test?: ReadonlyArray<string> }
}
const inspected = JSON.parse(run("buildah", ["inspect", "--type", "image", IMAGE], { quiet: true }))
const config: ImageConfig = inspected.Docker.config
/** The unpacked size buildah (like `docker images`) shows: "314 MB". */
const sizeOf = (image: string): string => run("buildah", ["images", "--format", "{{.Size}}", image], { quiet: true })
const imageSize = sizeOf(IMAGE)
const baseSize = base === undefined ? undefined : sizeOf(base)
step(`image size: ${imageSize}${baseSize === undefined ? "" : ` (base image ${baseSize})`}`)
check(
  JSON.stringify(config.Entrypoint) === '["campusgate"]' && JSON.stringify(config.Cmd) === '["serve"]',
  'ENTRYPOINT ["campusgate"] with CMD ["serve"]'
)
check(config.Healthcheck?.Test?.join(" ").includes("/healthz") === true, "the health check asks /healthz")

// --- run the entrypoint -------------------------------------------------------------
const container = run("buildah", ["from", IMAGE], { quiet: true })
const runStarted = performance.now()
let daemon: ChildProcess | undefined
try {
  const port = await freePort()
  const command = [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])]
  // `buildah run` applies the image's user, environment and working directory; PORT is what a platform would set.
  daemon = spawn("buildah", ["run", "--isolation", "chroot", "--env", `PORT=${port}`, container, "--", ...command], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const exited = new Promise<number | null>((resolve) => daemon!.once("exit", (code) => resolve(code)))
  const lines: Array<Record<string, unknown>> = []
  createInterface({ input: daemon.stdout! }).on("line", (line) => {
    try {
      lines.push(JSON.parse(line))
    } catch {
      lines.push({ raw: line })
    }
  })

  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    const healthy = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false
    )
    if (healthy) break
    if (daemon.exitCode !== null || Date.now() > deadline) fail(`no /healthz: ${JSON.stringify(lines)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const readySeconds = seconds(runStarted)
  check(true, `/healthz answers ${readySeconds} s after the entrypoint started`)

  const bootstrap = lines.find((line) => line.msg === "created the first API key; it is shown only this once")
  const key =
    typeof bootstrap?.key === "string"
      ? bootstrap.key
      : fail(
          `no bootstrap key was printed: ${whyNoBootstrap(Number(lines.find((line) => line.msg === "starting")?.pid))}`
        )
  const answer = await fetch(`${url}/api/v1/validate/target-group`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ email: "jane@ox.ac.uk", targetGroupId: "uk-students" })
  })
  const result = (await answer.json()) as { isValid?: boolean }
  check(answer.status === 200 && result.isValid === true, "the bootstrap key validates jane@ox.ac.uk")

  // The chroot isolation shares the host's process table: the daemon's pid is the host's.
  const pid = Number(lines.find((line) => line.msg === "starting")?.pid)
  const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1])
  check(uid !== 0 && Number.isInteger(uid), `the daemon runs as uid ${uid}, not root`)
  check(bootstrap?.storedIn === "/data/api-keys.yaml", "it stored the bootstrap key in /data")
  check(
    !existsSync(`/proc/${pid}/root/app/config/api-keys.yaml`),
    "the image carries no API keys from the build context (.dockerignore: config/api-keys.yaml)"
  )
  // Seen through the daemon's own root: /data is the image's volume, mounted for the run.
  const stored = statSync(`/proc/${pid}/root/data/api-keys.yaml`)
  check(stored.uid === uid, `/data/api-keys.yaml belongs to uid ${uid}: /data is writable by the daemon's user`)

  const stopStarted = performance.now()
  process.kill(pid, "SIGTERM")
  const code = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve("timeout"), 30_000).unref())
  ])
  check(code === 0, `SIGTERM ends it with exit code ${code} after ${seconds(stopStarted)} s`)
  check(lines.at(-1)?.msg === "stopped", 'its last log line is "stopped"')

  const checked = run("buildah", [
    "run",
    "--isolation",
    "chroot",
    container,
    "--",
    ...(config.Entrypoint ?? []),
    "check",
    "/app/config"
  ])
  check(/^ok: /m.test(checked), `"check /app/config" runs the CLI's check: ${checked.split("\n").at(-1)}`)

  console.log(
    JSON.stringify({
      image: IMAGE,
      imageSize,
      baseImage: base ?? "the Dockerfile's",
      baseImageSize: baseSize ?? null,
      baseSeconds,
      buildSeconds,
      readySeconds,
      totalSeconds: seconds(started)
    })
  )
} finally {
  if (daemon !== undefined && daemon.exitCode === null) daemon.kill("SIGKILL")
  run("buildah", ["rm", container], { quiet: true })
}
