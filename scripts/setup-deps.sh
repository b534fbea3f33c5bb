#!/usr/bin/env bash
# Installs the Debian packages that building, booting and testing ticklab need. Does nothing
# when all are present; runs `apt-get update` only when a package cannot be found otherwise.
set -euo pipefail

PKGS=(gcc make binutils nasm clang git qemu-system-x86 grub-pc-bin grub-efi-amd64-bin
      grub-common xorriso mtools ovmf gnu-efi python3 python3-serial python3-matplotlib
      python3-pytest chromium)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "setup-deps: missing Debian packages: ${missing[*]}" >&2
    echo "setup-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi
