#!/usr/bin/env bash
# Installs everything the extender needs to build and test, from Debian's archive only.
# Idempotent; run as root. Mirror URLs come from this machine's own apt sources, never
# from a host name written here.
#   --build-only  only what the two binaries need (the Dockerfile's builder stage): no test,
#                 format or Prometheus tools, no Catch2 from bookworm-backports.
set -euo pipefail
# shellcheck source=scripts/debian-mirror.sh
source "$(dirname "$0")/debian-mirror.sh"
BUILD_ONLY=0
[ "${1:-}" = "--build-only" ] && BUILD_ONLY=1

PROM_VERSION=1.0.2
PROM_SHA256=65838fed64c4667140a574b78eb9f5c995bab80d575b082c9c677c6795c3c607
PROM_PREFIX=${PROM_PREFIX:-/usr/local}
BUILD_PACKAGES=(build-essential cmake ninja-build pkg-config ca-certificates
  libcpprest-dev libssl-dev nlohmann-json3-dev libboost-dev libboost-graph-dev libyaml-cpp-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler)
TEST_PACKAGES=(git curl openssl clang-format clang-16 prometheus python3 python3-yaml)

log() { printf 'install-deps: %s\n' "$*" >&2; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    log "must run as root (try: sudo $0)"
    exit 1
  fi
}

ensure_backports() {
  if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return
  fi
  local mirror
  mirror=$(debian_mirror)
  log "adding bookworm-backports from $mirror"
  cat >/etc/apt/sources.list.d/gpu-topology-extender-backports.sources <<SRC
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  APT_UPDATED=0
}

APT_UPDATED=0
apt_update_once() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    apt-get update -qq
    APT_UPDATED=1
  fi
}

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || printf '%s\n' "$p"
  done
}

install_apt() {
  local missing wanted=("${BUILD_PACKAGES[@]}")
  [ "$BUILD_ONLY" -eq 1 ] || wanted+=("${TEST_PACKAGES[@]}")
  mapfile -t missing < <(missing_packages "${wanted[@]}")
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    apt_update_once
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  [ "$BUILD_ONLY" -eq 0 ] || return 0
  # Catch2 v3 lives only in bookworm-backports (bookworm main has the v2 API).
  local catch_ver
  catch_ver=$(dpkg-query -W -f='${Version}' libcatch2-dev 2>/dev/null || true)
  if [[ ! "$catch_ver" =~ ^3 ]]; then
    ensure_backports
    apt_update_once
    log "installing libcatch2-dev (v3) from bookworm-backports"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports libcatch2-dev
  fi
}

install_prometheus_cpp() {
  if [ -f "$PROM_PREFIX/lib/cmake/prometheus-cpp/prometheus-cpp-config-version.cmake" ] &&
     [ -f "$PROM_PREFIX/lib/libprometheus-cpp-core.a" ]; then
    return
  fi
  local mirror work
  mirror=$(debian_mirror)
  work=$(mktemp -d)
  log "building prometheus-cpp $PROM_VERSION (core, static) from Debian's upstream tarball"
  /usr/lib/apt/apt-helper download-file \
    "$mirror/pool/main/p/prometheus-cpp/prometheus-cpp_${PROM_VERSION}.orig.tar.gz" \
    "$work/prom.tar.gz" "SHA256:$PROM_SHA256" >/dev/null
  tar -xzf "$work/prom.tar.gz" -C "$work"
  local src
  src=$(find "$work" -maxdepth 1 -mindepth 1 -type d | head -n1)
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PROM_PREFIX" -DENABLE_PUSH=OFF -DENABLE_PULL=OFF \
    -DENABLE_TESTING=OFF -DENABLE_COMPRESSION=OFF -DUSE_THIRDPARTY_LIBRARIES=OFF \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON >/dev/null
  cmake --build "$work/build" >/dev/null
  cmake --install "$work/build" >/dev/null
  rm -rf "$work"
  # 1.0.2 ships no version file; write one so find_package(prometheus-cpp 1.0) works.
  cat >"$PROM_PREFIX/lib/cmake/prometheus-cpp/prometheus-cpp-config-version.cmake" <<VER
set(PACKAGE_VERSION "$PROM_VERSION")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
VER
}

main() {
  need_root
  install_apt
  install_prometheus_cpp
  log "all build dependencies present"
}

main "$@"
