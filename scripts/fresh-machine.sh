#!/usr/bin/env bash
# Runs a command from the README on a fresh, minimal Debian 12 root (debootstrap
# minbase + chroot), so nothing installed on this machine by hand can hide a
# package missing from scripts/setup.sh. The repository is cloned from HEAD into
# the root (committed files only, like CI's clean clone); ../shared is bound
# read-only beside it as the tests expect.
#
# Usage (as root): scripts/fresh-machine.sh [--new] [ROOT_DIR] -- COMMAND...
#   scripts/fresh-machine.sh -- scripts/lower-models.sh
#   scripts/fresh-machine.sh /var/tmp/fresh -- scripts/test.sh build
# ROOT_DIR (default /var/tmp/exir-fresh-root) is reused when it exists; delete it
# (or pass --new) to start over. Exit status is the command's, or 75 when the fresh root could
# not be made (no mirror reachable, no mount permission): callers may fall back.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
root=/var/tmp/exir-fresh-root
new_root=false
if [ "${1:-}" = "--new" ]; then new_root=true; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then root=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 [ROOT_DIR] -- COMMAND..." >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine: needs root (debootstrap, chroot, mount)" >&2; exit 2; }

if ! command -v debootstrap >/dev/null; then
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } || exit 75
fi
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Mounts left by a killed earlier run must go before anything is deleted.
unmount_below() {
  awk -v r="$1" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
}
unmount_below "$root"
if $new_root; then rm -rf --one-file-system "$root"; fi
if [ ! -x "$root/usr/bin/apt-get" ]; then
  echo "fresh-machine: debootstrap bookworm (minbase) into $root" >&2
  rm -rf --one-file-system "$root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; rm -rf --one-file-system "$root"; exit 75; }
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { # bind SRC DST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2" || { echo "fresh-machine: cannot bind-mount $1" >&2; exit 75; }
  mounts+=("$2")
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}
# /proc only: the root keeps the device nodes debootstrap made. Binding the
# host's /dev let a package script in the root replace the host's /dev/null.
bind /proc "$root/proc"
# A private pseudo-terminal instance for tests that need a terminal (script(1));
# the host's /dev/pts is not touched.
mkdir -p "$root/dev/pts"
if mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts" 2>/dev/null; then
  mounts+=("$root/dev/pts")
  rm -f "$root/dev/ptmx" && ln -s pts/ptmx "$root/dev/ptmx"
fi
if [ -d "$repo/../shared" ]; then bind "$(cd "$repo/../shared" && pwd)" "$root/work/shared" ro; fi

# A clean clone of HEAD, as CI makes one.
rm -rf --one-file-system "$root/work/main"
git -C "$repo" -c safe.directory='*' clone -q --no-local "$repo" "$root/work/main"
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 CI="${CI:-}" \
  /bin/bash -c 'cd /work/main && "$@"' bash "$@"
