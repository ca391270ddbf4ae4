#!/usr/bin/env bash
# Builds the repository's Dockerfile into an OCI image with no container registry anywhere: the
# Debian 12 base image is made from the Debian archive with mmdebstrap, buildah builds the
# Dockerfile on it (both stages get their packages from the same archive), podman exports the
# result as an OCI archive. Needs root; installs mmdebstrap, buildah and podman from Debian if
# missing. docs/testing.md, "Container image".
#
#   scripts/build-image.sh            image localhost/gpu-topology-extender:<version>, archive in
#                                     build/image/gpu-topology-extender-<version>.oci.tar
#   GTE_IMAGE=NAME:TAG                another image name
#   GTE_IMAGE_REBASE=1                re-create the base image (security updates) before building
#   JOBS=N                            compile jobs inside the build (default: nproc)
#
# Load the archive elsewhere with `podman load -i FILE`, `skopeo copy oci-archive:FILE docker://…`
# or `ctr -n k8s.io images import FILE`; push it with `podman push NAME docker://REGISTRY/…`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/debian-mirror.sh
source "$root/scripts/debian-mirror.sh"

log() { printf 'build-image: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { log "must run as root (buildah and mmdebstrap need it; try sudo)"; exit 1; }

version=$(sed -n 's/^project(gpu-topology-extender VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
image=${GTE_IMAGE:-localhost/gpu-topology-extender:$version}
out=$root/build/image
archive=$out/gpu-topology-extender-$version.oci.tar
suite=bookworm
base=localhost/gpu-topology-extender-base:$suite-slim
jobs=${JOBS:-$(nproc)}

tools=(mmdebstrap buildah podman)
missing=()
for t in "${tools[@]}"; do command -v "$t" >/dev/null || missing+=("$t"); done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
mkdir -p "$out"

# The base: Debian's minbase (Essential packages and apt) plus ca-certificates (an https archive)
# and passwd (the Dockerfile adds a user), with the dpkg path filters of Debian's -slim images
# (no manuals, docs other than copyright files, or translations; they stay in force for every
# package the Dockerfile installs). merged-/usr as symlinks, as debootstrap sets it up, instead of
# the usrmerge package, which would pull in Perl (47 MB). The archive is this machine's own.
if [ "${GTE_IMAGE_REBASE:-0}" = "1" ] || ! podman image exists "$base"; then
  mirror=$(debian_mirror)
  security=$(debian_security_mirror)
  sources=("deb $mirror $suite main" "deb $mirror $suite-updates main")
  [ -z "$security" ] || sources+=("deb $security $suite-security main")
  log "creating $base from $mirror with mmdebstrap"
  start=$SECONDS
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,passwd \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/groff/*' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    "$suite" "$out/base-rootfs.tar" "${sources[@]}"
  podman import --quiet --change 'CMD ["bash"]' "$out/base-rootfs.tar" "$base" >/dev/null
  rm -f "$out/base-rootfs.tar"
  log "base image ready in $((SECONDS - start)) s"
fi

rev=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
log "building $image (revision $rev, $jobs jobs)"
start=$SECONDS
# chroot isolation: the RUN steps share the host's network (the Debian archive) and need no
# runtime support for namespaces or cgroups. --layers keeps the dependency layer between builds.
buildah bud --isolation chroot --pull=never --layers --quiet \
  --build-arg "BUILDER_IMAGE=$base" --build-arg "RUNTIME_IMAGE=$base" \
  --build-arg "GTE_GIT_REV=$rev" --build-arg "GTE_BUILD_JOBS=$jobs" \
  -f "$root/Dockerfile" -t "$image" "$root" >/dev/null
log "built in $((SECONDS - start)) s"

rm -f "$archive"
podman save --quiet --format oci-archive -o "$archive" "$image"
size=$(podman image inspect --format '{{.Size}}' "$image")
log "$image: $((size / 1000000)) MB unpacked; $archive: $(($(stat -c %s "$archive") / 1000000)) MB"
