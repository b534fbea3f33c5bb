#!/bin/bash
# scripts/check-lib.sh - the library boundary (docs/library.md), checked:
#  1. every library header (drivers/*.h, lib/*.h, lib/time/*.h) includes only other ticklab/ headers or the
#     compiler's own <stdint.h>, <stdbool.h>, <stddef.h>, <stdarg.h>;
#  2. libticklab.a references no symbol outside itself but the porting layer's.
# Prints one line per violation and "lib: N passed, N failed"; exits non-zero on a failure.
set -u
cd "$(dirname "$0")/.."
ARCHIVE=${1:-build/libticklab.a}
PORTING="memcpy memmove memset memcmp rdmsr_safe wrmsr_safe"
pass=0 fail=0

bad_includes=$(grep -Hn '^[[:space:]]*#[[:space:]]*include' drivers/*.h lib/*.h lib/time/*.h |
               grep -Ev '#[[:space:]]*include[[:space:]]+("ticklab/[a-z0-9_]+\.h"|<(stdint|stdbool|stddef|stdarg)\.h>)')
if [ -n "$bad_includes" ]; then
    echo "FAIL public headers include something private or foreign:"
    echo "$bad_includes" | sed 's/^/  /'
    fail=$((fail + 1))
else
    echo "PASS public headers include only ticklab/ and compiler headers"
    pass=$((pass + 1))
fi

if [ ! -f "$ARCHIVE" ]; then
    echo "FAIL $ARCHIVE missing (make lib)"
    fail=$((fail + 1))
else
    defined=$(nm -g --defined-only "$ARCHIVE" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
    undefined=$(nm -g --undefined-only "$ARCHIVE" 2>/dev/null | awk '{ print $NF }' | grep -v ':$' | sort -u)
    outside=$(comm -23 <(echo "$undefined") <(echo "$defined") |
              grep -vxF -f <(tr ' ' '\n' <<< "$PORTING") | grep -v '^$')
    if [ -n "$outside" ]; then
        echo "FAIL $ARCHIVE references symbols outside the library and its porting layer:"
        for s in $outside; do
            echo "  $s (from $(nm -A --undefined-only "$ARCHIVE" | grep -w "$s" | cut -d: -f2 | sort -u | tr '\n' ' '))"
        done
        fail=$((fail + 1))
    else
        echo "PASS $ARCHIVE needs only the porting layer: $PORTING"
        pass=$((pass + 1))
    fi
fi
echo "lib: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
