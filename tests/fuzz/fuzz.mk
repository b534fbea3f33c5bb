# tests/fuzz/fuzz.mk - libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined).
#
#   make fuzz [FUZZ_SECONDS=60]   build build/fuzz/fuzz_acpi and fuzz it, then print the
#                                 executions and crashes; a crash input is kept in
#                                 build/fuzz/artifacts/ (replay: build/fuzz/fuzz_acpi FILE)
#   make fuzz-short               20 seconds, ending with `fuzz: N passed, N failed` for
#                                 scripts/run-tests.sh (1 passed when nothing crashed)
#
# The seed corpus is made from the QEMU fixtures (tests/host/fixtures/acpi); what the fuzzer
# finds beyond it accumulates in build/fuzz/corpus/acpi across runs.
# Included by the top Makefile; also works alone: make -f tests/fuzz/fuzz.mk fuzz

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_PYTHON  ?= /usr/bin/python3
FUZZ_CFLAGS  := -std=c11 -g -O1 -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -DTICKLAB_HOSTED -I. -Ibuild/gen -Itests/host
FUZZ_OUT     := build/fuzz
include scripts/headers.mk
FUZZ_ACPI_SRCS := tests/fuzz/fuzz_acpi.c drivers/acpi.c drivers/spcr.c drivers/mcfg.c tests/host/acpi_fixture.c
FUZZ_ACPI_HDRS := drivers/acpi.h drivers/spcr.h drivers/mcfg.h tests/host/acpi_fixture.h
FUZZ_ACPI_FIXTURES := $(wildcard tests/host/fixtures/acpi/*/manifest)
FUZZ_EXTRACT := tests/host/fixtures/acpi/extract.py

$(FUZZ_OUT)/fuzz_acpi: $(FUZZ_ACPI_SRCS) $(FUZZ_ACPI_HDRS) tests/fuzz/fuzz.mk | deps-test $(HDR_FARM)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_ACPI_SRCS)

# Two seeds per fixture: as captured, and with the fix-checksums flag set.
$(FUZZ_OUT)/seeds/acpi/.stamp: $(FUZZ_ACPI_FIXTURES) $(FUZZ_EXTRACT)
	@mkdir -p $(@D)
	@for m in $(FUZZ_ACPI_FIXTURES); do \
	    d=$$(dirname $$m); n=$$(basename $$d); \
	    $(FUZZ_PYTHON) $(FUZZ_EXTRACT) --seed $$d $(@D)/$$n || exit 1; \
	    $(FUZZ_PYTHON) $(FUZZ_EXTRACT) --seed --fix-checksums $$d $(@D)/$$n-fix || exit 1; \
	done
	@touch $@

# $(call fuzz_run,SECONDS): runs the fuzzer; leaves execs/crashes in the shell variables
# and the fuzzer's output in build/fuzz/fuzz_acpi.log.
define fuzz_run
mkdir -p $(FUZZ_OUT)/corpus/acpi $(FUZZ_OUT)/artifacts; \
rm -f $(FUZZ_OUT)/artifacts/*; \
./$(FUZZ_OUT)/fuzz_acpi -max_total_time=$(1) -max_len=8192 -print_final_stats=1 \
    -artifact_prefix=$(FUZZ_OUT)/artifacts/ $(FUZZ_OUT)/corpus/acpi $(FUZZ_OUT)/seeds/acpi \
    > $(FUZZ_OUT)/fuzz_acpi.log 2>&1; rc=$$?; \
execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_OUT)/fuzz_acpi.log); \
[ -n "$$execs" ] || execs=$$(grep -Eo '^#[0-9]+' $(FUZZ_OUT)/fuzz_acpi.log | tail -1 | tr -d '#'); \
crashes=$$(ls $(FUZZ_OUT)/artifacts | wc -l); \
[ $$rc = 0 ] || [ $$crashes != 0 ] || crashes=1
endef

.PHONY: fuzz fuzz-short
fuzz: $(FUZZ_OUT)/fuzz_acpi $(FUZZ_OUT)/seeds/acpi/.stamp
	@$(call fuzz_run,$(FUZZ_SECONDS)); \
	echo "fuzz_acpi: $(FUZZ_SECONDS) s, $${execs:-?} executions, $$crashes crash(es)"; \
	if [ $$crashes != 0 ]; then grep -m1 -A12 'ERROR\|==ERROR\|deadly signal' $(FUZZ_OUT)/fuzz_acpi.log; \
	    ls $(FUZZ_OUT)/artifacts; exit 1; fi

fuzz-short: $(FUZZ_OUT)/fuzz_acpi $(FUZZ_OUT)/seeds/acpi/.stamp
	@$(call fuzz_run,20); \
	echo "fuzz_acpi: 20 s, $${execs:-?} executions, $$crashes crash(es)"; \
	if [ $$crashes = 0 ]; then echo "fuzz: 1 passed, 0 failed"; \
	else ls $(FUZZ_OUT)/artifacts; echo "fuzz: 0 passed, 1 failed"; exit 1; fi
