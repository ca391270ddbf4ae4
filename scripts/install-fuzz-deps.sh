#!/usr/bin/env bash
# Installs what `make fuzz` needs on top of scripts/install-deps.sh: Debian 12's clang 16, its
# compiler runtime (libFuzzer, ASan, UBSan) and llvm-symbolizer (stack traces of findings). clang 14, bookworm's default `clang`, cannot compile
# this code base against GCC 12's libstdc++ in C++20 mode (its consteval handling rejects the
# standard library's operator<=> on strings). apt-get only; run as root.
set -euo pipefail

PACKAGES=(clang-16 libclang-rt-16-dev llvm-16)

if [ "$(id -u)" -ne 0 ]; then
  printf 'install-fuzz-deps: must run as root (try: sudo %s)\n' "$0" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'install-fuzz-deps: installing %s\n' "${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
