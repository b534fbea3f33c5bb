#!/usr/bin/env bash
# shimfiles.sh: Debian's Microsoft-signed shim and its MokManager, for the Secure Boot stick
# (scripts/mkefi.sh --secureboot; tests/qemu/cases_secureboot.py), without installing them.
# Prints two lines: the path of shim (shimx64.efi.signed), then MokManager's (mmx64.efi.signed).
#
# Where they come from:
#   - the installed packages, when shim-signed and shim-helpers-amd64-signed are both
#     installed (dpkg says so): /usr/lib/shim/ (SHIM_SOURCE=debian skips this)
#   - otherwise the two .deb files from Debian's archive, the versions apt would install
#     (its candidates), fetched with `apt-get download` and unpacked with `dpkg-deb -x` into
#     build/shim/<shim-signed version>_<shim-helpers-amd64-signed version>/. That is a plain
#     unpacking of the archive: nothing is installed, dpkg's database is not touched and no
#     maintainer script runs (installing shim-signed would run grub-install on a host that
#     boots through UEFI). Only these two packages are fetched, none of their dependencies
#     (shim-signed-common, mokutil, GRUB: the installed tooling, of no use on a stick). A
#     later call finds them there (no network); `make clean` removes them. apt-get download
#     checks each file against the archive's signed package lists, as an installation
#     would. As root, `apt-get update` runs (once) when apt knows no candidate yet (no
#     package lists) or the download fails (lists older than the archive name versions it
#     has replaced); another user gets the reason instead. When the current versions cannot
#     be had but an earlier download is in build/shim/, that one is used, saying so.
# Either way both files are checked before their paths are printed: shim carries a signature
# issued by Microsoft's UEFI CA (2011 or 2023), MokManager one by the Debian Secure Boot CA
# (`sbverify --list`, sbsigntool; what is checked is who signed, the chain to Microsoft's
# root is the firmware's to check).
#
# Exit status: 0 with the two paths; 2 when they cannot be had here (apt knows no such
# package, the download failed: no network to Debian's archive), one line on stderr saying
# why (the boot tests SKIP on this); 1 for anything else (files that fail the checks).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=$root/build/shim
SHIM=shim-signed MM=shim-helpers-amd64-signed
SHIM_EFI=usr/lib/shim/shimx64.efi.signed MM_EFI=usr/lib/shim/mmx64.efi.signed

say() { echo "shimfiles: $*" >&2; }
die() { say "$*"; exit 1; }
unavailable() { say "$*"; exit 2; }
case ${SHIM_SOURCE:-auto} in auto|debian) ;; *) die "SHIM_SOURCE=$SHIM_SOURCE: accepted are auto (the default) and debian" ;; esac
command -v sbverify >/dev/null || die "sbverify missing: Debian package sbsigntool (make deps-secureboot)"

# signed_by FILE TEXT...: one of the TEXTs is among the issuers of FILE's signatures.
signed_by() {
    local file=$1 list t; shift
    list=$(sbverify --list "$file" 2>/dev/null) || return 1
    for t in "$@"; do
        [[ $list == *"image signature issuers:"*"$t"* ]] && return 0
    done
    return 1
}
check_and_print() {   # SHIM_PATH MM_PATH WHERE
    signed_by "$1" "CN=Microsoft Corporation UEFI CA 2011" "CN=Microsoft UEFI CA 2023" ||
        die "$1 ($3) carries no signature by Microsoft's UEFI CA (sbverify --list): not Debian's signed shim"
    signed_by "$2" "CN=Debian Secure Boot CA" ||
        die "$2 ($3) carries no signature by the Debian Secure Boot CA (sbverify --list): not Debian's signed MokManager"
    printf '%s\n%s\n' "$1" "$2"
    exit 0
}

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}
if [ "${SHIM_SOURCE:-}" != debian ] && installed $SHIM && installed $MM &&
        [ -f /$SHIM_EFI ] && [ -f /$MM_EFI ]; then
    check_and_print /$SHIM_EFI /$MM_EFI "installed package"
fi

# candidates: "V1 V2", the versions apt would install of the two (one apt-cache call: it
# takes most of a second on a loaded machine); a package without one leaves its word empty.
candidates() {
    local policy
    policy=$(apt-cache policy $SHIM $MM 2>/dev/null) || true
    awk -v a=$SHIM -v b=$MM '/^[^ ].*:$/ { pkg = substr($0, 1, length($0) - 1) }
        $1 == "Candidate:" && $2 !~ /^\(/ { v[pkg] = $2 }
        END { print (a in v ? v[a] : "-") " " (b in v ? v[b] : "-") }' <<< "$policy"
}
# The newest complete unpacking, for when apt cannot say which version is current.
cached_any() {
    local d
    d=$(ls -1td "$cache"/*/ 2>/dev/null | head -1) || true
    [ -n "$d" ] && [ -f "$d$SHIM_EFI" ] && [ -f "$d$MM_EFI" ] && echo "${d%/}"
}

updated=0
update() {   # apt-get update, once, as root only
    [ "$updated" = 0 ] && [ "$(id -u)" = 0 ] || return 1
    updated=1
    say "$1: apt-get update"
    apt-get update -qq >&2 || true
}
# A copy unpacked earlier, when the current one cannot be had: still Debian's signed files.
fall_back() {
    local d
    d=$(cached_any) || return 0
    say "$1; using the copy unpacked earlier in ${d#"$root"/}"
    check_and_print "$d/$SHIM_EFI" "$d/$MM_EFI" "Debian's archive, unpacked earlier"
}

read -r v1 v2 < <(candidates)
lists="no Debian 12 package lists: apt-get update as root, with Debian's main sources in /etc/apt/sources.list"
if [ "$v1" = - ] || [ "$v2" = - ]; then
    if update "apt does not know $SHIM and $MM yet"; then
        lists="apt-get update found none: no network to Debian's archive, or not its main sources in /etc/apt/sources.list"
        read -r v1 v2 < <(candidates)
    fi
fi
if [ "$v1" = - ] || [ "$v2" = - ]; then
    fall_back "apt knows no version of $SHIM and $MM"
    unavailable "apt knows no version of $SHIM and $MM ($lists)"
fi

dir=$cache/${v1//:/%3a}_${v2//:/%3a}
if [ ! -f "$dir/$SHIM_EFI" ] || [ ! -f "$dir/$MM_EFI" ]; then
    mkdir -p "$cache"
    stage=$(mktemp -d "$cache/.new.XXXXXX")
    # Downloaded into a directory of its own under /tmp: as root, apt fetches as its
    # unprivileged user _apt, which must be able to write there (it cannot enter /root).
    dl=$(mktemp -d)
    trap 'rm -rf "$stage" "$dl"' EXIT
    if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
    download() {
        rm -f "$dl"/*.deb     # nothing of an earlier attempt (another version) left
        [ "$v1" != - ] && [ "$v2" != - ] || return 1
        say "fetching $SHIM $v1 and $MM $v2 from Debian's archive (apt-get download;" \
            "unpacked into ${dir#"$root"/}, nothing installed)"
        (cd "$dl" && apt-get download -q -o Acquire::Retries=1 "$SHIM=$v1" "$MM=$v2") \
            > "$stage/download.log" 2>&1
    }
    if ! download; then
        # Lists older than the archive name versions it no longer has (a point release
        # replaces them): fresh lists, then the versions they name.
        if update "apt-get download failed"; then
            read -r v1 v2 < <(candidates)
            dir=$cache/${v1//:/%3a}_${v2//:/%3a}
            if [ -f "$dir/$SHIM_EFI" ] && [ -f "$dir/$MM_EFI" ]; then
                check_and_print "$dir/$SHIM_EFI" "$dir/$MM_EFI" "from Debian's archive, $SHIM $v1, $MM $v2"
            fi
        fi
        if [ "$updated" = 0 ] || ! download; then
            why="apt-get download $SHIM=$v1 $MM=$v2 failed (no network to Debian's archive$(
                [ "$updated" = 1 ] || echo ", or package lists older than it: apt-get update"
                )): $(grep -E '^(E|W):' "$stage/download.log" | head -1 | cut -c1-240)"
            fall_back "$why"
            unavailable "$why"
        fi
    fi
    mkdir -p "$stage/debs"
    for p in "$SHIM:$v1" "$MM:$v2"; do
        name=${p%%:*} ver=${p#*:}
        deb=$(ls "$dl/${name}_"*.deb 2>/dev/null | head -1) ||
            die "apt-get download left no $name .deb"
        [ -n "$deb" ] || die "apt-get download left no $name .deb"
        got=$(dpkg-deb -f "$deb" Package Version | tr '\n' ' ')
        [ "$got" = "Package: $name Version: $ver " ] ||
            die "$(basename "$deb") says '$got', expected $name $ver"
        cp "$deb" "$stage/debs/"
        dpkg-deb -x "$deb" "$stage/root"
    done
    # The pair apt would install together: shim-signed's own lower bound on its helpers.
    need=$(dpkg-deb -f "$stage/debs/${SHIM}_"*.deb Depends | tr ',' '\n' |
           sed -n "s/^ *$MM (>= \([^)]*\)).*/\1/p" | head -1)
    if [ -n "$need" ] && ! dpkg --compare-versions "$v2" ge "$need"; then
        die "$SHIM $v1 needs $MM >= $need, the archive offers $v2"
    fi
    for f in $SHIM_EFI $MM_EFI; do
        [ -f "$stage/root/$f" ] || die "/$f is not in the downloaded packages"
        mkdir -p "$stage/$(dirname "$f")"
        mv "$stage/root/$f" "$stage/$f"
    done
    rm -rf "$stage/root" "$stage/download.log"
    printf '%s %s\n%s %s\n' $SHIM "$v1" $MM "$v2" > "$stage/versions"
    chmod 755 "$stage"
    # Moved in whole: a second call at the same moment sees no half-unpacked directory (if
    # it got there first, its copy is used and ours dropped).
    mv -T "$stage" "$dir" 2>/dev/null || rm -rf "$stage"
fi
check_and_print "$dir/$SHIM_EFI" "$dir/$MM_EFI" "from Debian's archive, $SHIM $v1, $MM $v2"
