#!/usr/bin/env bash
# run-tests.sh: everything `make test` runs, in order of speed, with one summary at the end.
#   0. the library boundary: public headers and the archive's symbols (scripts/check-lib.sh);
#      the layers point one way, no include cycle (scripts/check-layers.py); the
#      experiments' budgets fit a 5 / 30 minute run (scripts/check-budgets.py)
#   1. host unit tests: lib/, drivers/ and kernel/ logic against device models, ASan + UBSan
#   2. host tool tests: tools/ (pytest)
#   3. boot tests: the image under QEMU, records checked (tests/qemu/boottest.py)
# Every suite runs even when an earlier one fails; the last line is `N passed, N failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
total_pass=0 total_fail=0 broken=() failures=()
t_start=$(date +%s)

# `make test` runs this in make's question mode (see the Makefile): take the q back out of
# the flags the sub-makes below inherit, or they would build nothing. The jobserver stays.
if [ -n "${MAKEFLAGS:-}" ]; then
    first=${MAKEFLAGS%% *}
    [[ $first == -* || $first == *=* ]] || MAKEFLAGS=${first//q/}${MAKEFLAGS#"$first"}
    export MAKEFLAGS
fi

# The last lines name every failed case with its reason (a CI log is read from its end).
summary() {
    echo
    if [ ${#failures[@]} -gt 0 ]; then
        echo "failed:"
        for f in "${failures[@]}"; do echo "  $f"; done
    fi
    for b in "${broken[@]}"; do echo "broken suite: $b"; done
    echo "tests took $(( $(date +%s) - t_start )) s"
    echo "$total_pass passed, $total_fail failed"
    [ "$total_fail" = 0 ]
    exit
}

# Every package the tests need, before anything is built (and installed, as root): a
# missing one is one line naming its package, then the summary.
echo "== packages: scripts/setup-deps.sh test"
if ! scripts/setup-deps.sh test; then
    broken+=("packages (scripts/setup-deps.sh test)")
    total_fail=$((total_fail + 1))
    summary
fi

# Adds a suite's `N passed, N failed` line (or pytest's summary) to the totals. A suite that
# printed no summary counts as one failure, so a crash never passes silently.
tally() {
    local name=$1 log=$2 rc=$3 p f
    p=$(grep -Eo '([0-9]+) passed' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
    f=$(grep -Eo '([0-9]+) failed' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
    if [ -z "$p" ] && [ -z "$f" ]; then
        broken+=("$name (no summary, exit $rc)")
        total_fail=$((total_fail + 1))
        return
    fi
    total_pass=$((total_pass + ${p:-0}))
    total_fail=$((total_fail + ${f:-0}))
    if [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; then
        broken+=("$name (exit $rc)")
        total_fail=$((total_fail + 1))
    fi
}

suite() {
    local name=$1; shift
    local log
    log=$(mktemp)
    echo "== $name: $*"
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    tally "$name" "$log" "$rc"
    # each suite's failed cases as it prints them: "FAIL case ..." (host, boot tests, checks)
    # or pytest's "FAILED file::test - reason"
    local line
    while IFS= read -r line; do
        failures+=("$name: ${line:0:300}")
    done < <(grep -E '^(FAIL |FAILED |ERROR )' "$log" || true)
    rm -f "$log"
}

echo "== build: make kernel lib example iso efi"
if ! make -s kernel lib example iso efi; then
    broken+=("build")
    total_fail=$((total_fail + 1))
fi
suite lib scripts/check-lib.sh
suite layers $PY scripts/check-layers.py
suite budgets $PY scripts/check-budgets.py
suite host make -s host-test
suite fuzz make -s fuzz-short
suite tools $PY -m pytest -q -p no:cacheprovider tools/tests
suite qemu $PY tests/qemu/boottest.py
summary
