#!/usr/bin/env bash
# setup-deps.sh [run|test|secureboot] [--check]
#
# Makes sure the Debian packages a command needs are installed, and installs the missing ones
# (as root). Two sets:
#   run   what building, booting and reporting need (make, make run, make iso/efi/usb, the
#         host tool's report): compilers, NASM, QEMU, GRUB, OVMF, gnu-efi, Python with
#         pyserial and matplotlib; zbar-tools and python3-opencv for `tools/ticklab
#         decode` (QR photos: OpenCV straightens a code photographed off square, zbar
#         reads its bytes)
#   test  run + what only the tests need (make test): clang and its sanitizer/fuzzer
#         runtime, pytest and pytest-xdist (the tools suite on two workers), hypothesis,
#         chromium for the report page's browser test, sbsigntool and openssl for the Secure Boot boot tests, qrencode (the QR
#         encoder's known answers), python3-pil (degraded screen photos), and for the
#         database tests a PostgreSQL server (postgresql: the tests start their own in a
#         temporary folder) and its client library (python3-psycopg). The tool's `db`
#         commands on a SQLite file need nothing beyond Python; on a PostgreSQL server
#         they need python3-psycopg (apt-get install python3-psycopg)
#   secureboot  run + what the Secure Boot stick needs (make secureboot-usb, make
#         test-secureboot): sbsigntool and openssl. Debian's signed shim and MokManager are
#         no package of either set: scripts/shimfiles.sh downloads their packages
#         (shim-signed, shim-helpers-amd64-signed) and unpacks them under build/shim/ without
#         installing them, because installing shim-signed on a Debian host that itself boots
#         through UEFI with GRUB runs grub-install for that host's boot loader (Debian's own
#         behaviour), which nobody building a stick has asked for.
# Each package is found by what it provides (a command, a file, a Python module), not by its
# name in dpkg, so the check is also right where a tool came from elsewhere. A missing one is
# named in one line with the package that provides it. --check only reports (exit 1 when
# something is missing); without it the missing packages are installed, after one line that
# says how many packages that is and how many megabytes, and `apt-get update` runs first
# only when apt does not know a package.
set -euo pipefail

set_name=run check_only=0
for a in "$@"; do
    case $a in
        run|test|secureboot) set_name=$a ;;
        --check) check_only=1 ;;
        *) echo "setup-deps: unknown argument '$a' (accepted: run, test, secureboot, --check)" >&2; exit 2 ;;
    esac
done

# probe|package: cmd:NAME (on PATH), file:PATH (a glob: any match), py:MODULE (importable by
# /usr/bin/python3, the interpreter the host tool runs under).
RUN_PROBES=(
    cmd:gcc\|gcc  cmd:make\|make  cmd:ld\|binutils  cmd:objcopy\|binutils  cmd:nasm\|nasm
    cmd:git\|git
    cmd:qemu-system-x86_64\|qemu-system-x86
    file:/usr/share/grub/ascii.h\|grub-common  cmd:grub-mkrescue\|grub-common
    file:/usr/lib/grub/i386-pc/boot.img\|grub-pc-bin
    file:/usr/lib/grub/x86_64-efi/kernel.img\|grub-efi-amd64-bin
    cmd:xorriso\|xorriso  cmd:mformat\|mtools
    file:/usr/share/ovmf/OVMF.fd\|ovmf
    file:/usr/lib/crt0-efi-x86_64.o\|gnu-efi  file:/usr/include/efi/efi.h\|gnu-efi
    cmd:/usr/bin/python3\|python3  py:serial\|python3-serial  py:matplotlib\|python3-matplotlib
    cmd:zbarimg\|zbar-tools  py:cv2\|python3-opencv  py:numpy\|python3-numpy
)
TEST_PROBES=(
    cmd:clang\|clang
    'file:/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a|libclang-rt-14-dev'
    'file:/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a|libclang-rt-14-dev'
    py:pytest\|python3-pytest  py:xdist\|python3-pytest-xdist  py:hypothesis\|python3-hypothesis
    cmd:chromium\|chromium
    cmd:qrencode\|qrencode  py:PIL\|python3-pil
    'file:/usr/lib/postgresql/*/bin/initdb|postgresql'  py:psycopg\|python3-psycopg
)
# In both the test set and the secureboot set. The OVMF build with Secure Boot and
# Microsoft's keys is in the ovmf package the run set installs already.
SECUREBOOT_PROBES=(
    cmd:sbsign\|sbsigntool  cmd:sbverify\|sbsigntool  cmd:openssl\|openssl
    file:/usr/share/OVMF/OVMF_CODE_4M.ms.fd\|ovmf  file:/usr/share/OVMF/OVMF_VARS_4M.ms.fd\|ovmf
)
probes=("${RUN_PROBES[@]}")
[ "$set_name" = test ] && probes+=("${TEST_PROBES[@]}" "${SECUREBOOT_PROBES[@]}")
[ "$set_name" = secureboot ] && probes+=("${SECUREBOOT_PROBES[@]}")

present() {
    local kind=${1%%:*} what=${1#*:}
    case $kind in
        cmd) command -v "$what" >/dev/null 2>&1 ;;
        file) compgen -G "$what" >/dev/null ;;
        py) [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $what" >/dev/null 2>&1 ;;
    esac
}

missing=() lines=()
for p in "${probes[@]}"; do
    probe=${p%|*} pkg=${p##*|}
    present "$probe" && continue
    lines+=("setup-deps: missing ${probe#*:} (${probe%%:*}): Debian package $pkg")
    [[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ]; then
    printf '%s\n' "${lines[@]}" >&2
    target=deps; [ "$set_name" = run ] || target=deps-$set_name
    [ "$check_only" = 1 ] || echo "setup-deps: run as root to install them (make $target), or: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q --no-install-recommends)
# apt knows a package when it has a candidate version; a fresh machine may have no lists yet.
# (Read whole, not piped to grep -q: with pipefail an early grep exit fails the pipe.)
known() {
    local policy
    policy=$(apt-cache policy "$1" 2>/dev/null) || return 1
    [[ $policy == *"Candidate: "[!\(]* ]]
}
for pkg in "${missing[@]}"; do
    if ! known "$pkg"; then
        echo "setup-deps: apt does not know $pkg yet: apt-get update"
        apt-get update -q
        break
    fi
done
for pkg in "${missing[@]}"; do
    known "$pkg" && continue
    echo "setup-deps: apt has no package $pkg even after apt-get update (are Debian 12's" \
         "main sources in /etc/apt/sources.list?)" >&2
    exit 1
done
# What it will take, in one line, before it starts: apt's own plan, not a guess.
plan=$(apt-get install --assume-no -q --no-install-recommends "${missing[@]}" 2>/dev/null || true)
count=$(sed -n 's/^\([0-9][0-9]*\) upgraded, \([0-9][0-9]*\) newly installed.*/\2/p' <<< "$plan")
fetch=$(sed -n 's/^Need to get \([^ ]* [kMG]*B\).*/\1/p' <<< "$plan")
disk=$(sed -n 's/^After this operation, \([^ ]* [kMG]*B\).*/\1/p' <<< "$plan")
echo "setup-deps ($set_name): installing ${missing[*]}: ${count:-?} packages with their" \
     "dependencies, ${fetch:-?} to download, ${disk:-?} on disk"
if ! apt-get install "${apt_opts[@]}" "${missing[@]}"; then
    apt-get update -q
    apt-get install "${apt_opts[@]}" "${missing[@]}"
fi
# Installed is not the same as found: say what is still missing instead of failing later.
still=()
for p in "${probes[@]}"; do
    present "${p%|*}" || still+=("${p%|*} (${p##*|})")
done
if [ ${#still[@]} -gt 0 ]; then
    echo "setup-deps: still missing after the install: ${still[*]}" >&2
    exit 1
fi
echo "setup-deps ($set_name): done"
