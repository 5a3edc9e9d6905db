#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, when missing.
# Idempotent: does nothing when everything is present. Needs root (or sudo) to install.
set -euo pipefail

packages=(
  cmake g++ make python3 pkgconf
  libcli11-dev nlohmann-json3-dev flatbuffers-compiler libflatbuffers-dev
  libyaml-cpp-dev catch2 libsimdjson-dev libzip-dev libssl-dev zlib1g-dev libdeflate-dev libisal-dev libmimalloc-dev
  llvm-14-tools
  clang-14 libclang-rt-14-dev # fuzz/run.sh: clang with libFuzzer, ASan and UBSan
  valgrind # bench/run --instructions (callgrind), tested by bench.instructions
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
