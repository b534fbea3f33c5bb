#!/usr/bin/env bash
# sbkey.sh: the key the Secure Boot stick's ticklab.efi is signed with (docs/real-hardware.md,
# "Secure Boot left on"). Prints two lines: the private key's path, then the certificate's
# (both PEM). Never inside the repository, never committed.
#
#   SB_KEY and SB_CERT given (your own key, PEM files): checked (they must be a pair) and used.
#   Otherwise SB_DIR, by default ${XDG_CONFIG_HOME:-~/.config}/ticklab/secureboot:
#   ticklab-sb.key and ticklab-sb.crt there are used; the first time, they are made (RSA 2048,
#   a self-signed certificate for code signing, SHA-256, 10 years), the key readable by you
#   only. The firmware and shim do not check the validity dates (a PC has no trusted clock).
# Whoever has the private key can sign code that every PC which enrolled its certificate
# starts under Secure Boot: keep it like a password, and remove the enrollment when done.
set -euo pipefail

die() { echo "sbkey: $*" >&2; exit 1; }
command -v openssl >/dev/null || die "openssl missing: Debian package openssl (make deps-secureboot)"

pair_ok() {   # the certificate's public key is the private key's
    local a b
    a=$(openssl x509 -in "$2" -noout -pubkey 2>/dev/null) || return 1
    b=$(openssl pkey -in "$1" -pubout 2>/dev/null) || return 1
    [ -n "$a" ] && [ "$a" = "$b" ]
}

if [ -n "${SB_KEY-}" ] || [ -n "${SB_CERT-}" ]; then
    [ -n "${SB_KEY-}" ] && [ -n "${SB_CERT-}" ] || die "give both SB_KEY (private key) and SB_CERT (certificate), PEM"
    [ -r "$SB_KEY" ] || die "SB_KEY $SB_KEY: no such readable file"
    [ -r "$SB_CERT" ] || die "SB_CERT $SB_CERT: no such readable file"
    openssl x509 -in "$SB_CERT" -noout 2>/dev/null || die "SB_CERT $SB_CERT is not a PEM X.509 certificate"
    pair_ok "$SB_KEY" "$SB_CERT" || die "SB_KEY $SB_KEY is not the private key of SB_CERT $SB_CERT (or not a PEM key without a passphrase)"
    printf '%s\n%s\n' "$SB_KEY" "$SB_CERT"
    exit 0
fi

dir=${SB_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/ticklab/secureboot}
key=$dir/ticklab-sb.key cert=$dir/ticklab-sb.crt
if [ -e "$key" ] || [ -e "$cert" ]; then
    [ -r "$key" ] && [ -r "$cert" ] || die "$dir holds only one of ticklab-sb.key and ticklab-sb.crt: restore the other, or move both away to make a new pair"
    pair_ok "$key" "$cert" || die "$key and $cert are not a pair: restore them, or move both away to make a new pair"
    printf '%s\n%s\n' "$key" "$cert"
    exit 0
fi

# First use: made in a scratch directory beside the final one and moved in whole, so that a
# second sbkey.sh running at the same moment never sees half a pair.
umask 077
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.new.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
subject="/CN=ticklab Secure Boot key ($(id -un 2>/dev/null || echo user)@$(hostname 2>/dev/null || echo host) $(date -u +%Y-%m-%d))"
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "$subject" \
    -addext basicConstraints=critical,CA:FALSE -addext keyUsage=critical,digitalSignature \
    -addext extendedKeyUsage=codeSigning \
    -keyout "$tmp/ticklab-sb.key" -out "$tmp/ticklab-sb.crt" 2>"$tmp/log" \
    || { cat "$tmp/log" >&2; die "openssl could not make the key"; }
# ln refuses to replace a file: if another sbkey.sh got there first, its pair is used.
chmod 644 "$tmp/ticklab-sb.crt"
ln "$tmp/ticklab-sb.crt" "$cert" 2>/dev/null || { sleep 1; exec "$0"; }
ln "$tmp/ticklab-sb.key" "$key"
echo "sbkey: made a new Secure Boot signing key: $key (private: keep it), $cert" >&2
printf '%s\n%s\n' "$key" "$cert"
