# tests/fuzz/fuzz.mk - libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined).
#
#   make fuzz [FUZZ_SECONDS=60]   build build/fuzz/fuzz_acpi and build/fuzz/fuzz_smbios and
#                                 fuzz each for FUZZ_SECONDS, then print the executions and
#                                 crashes; a crash input is kept in build/fuzz/artifacts-NAME/
#                                 (replay: build/fuzz/fuzz_NAME FILE)
#   make fuzz-short               20 seconds of the ACPI parser and 10 of the SMBIOS parser,
#                                 ending with `fuzz: N passed, N failed` for
#                                 scripts/run-tests.sh (one pass per target without a crash)
#
# The ACPI seed corpus is made from the QEMU fixtures (tests/host/fixtures/acpi), the SMBIOS
# one by tests/fuzz/smbios_seeds.py; what the fuzzer finds beyond them accumulates in
# build/fuzz/corpus/NAME across runs.
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

FUZZ_SMBIOS_SRCS := tests/fuzz/fuzz_smbios.c drivers/smbios.c tests/host/acpi_fixture.c \
                    tests/host/smbios_build.c lib/kstring.c drivers/acpi.c drivers/spcr.c \
                    drivers/mcfg.c
FUZZ_SMBIOS_HDRS := drivers/smbios.h tests/host/smbios_build.h $(FUZZ_ACPI_HDRS)

$(FUZZ_OUT)/fuzz_smbios: $(FUZZ_SMBIOS_SRCS) $(FUZZ_SMBIOS_HDRS) tests/fuzz/fuzz.mk | deps-test $(HDR_FARM)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SMBIOS_SRCS)

$(FUZZ_OUT)/seeds/smbios/.stamp: tests/fuzz/smbios_seeds.py
	@mkdir -p $(@D)
	$(FUZZ_PYTHON) tests/fuzz/smbios_seeds.py $(@D)
	@touch $@

# Two seeds per fixture: as captured, and with the fix-checksums flag set.
$(FUZZ_OUT)/seeds/acpi/.stamp: $(FUZZ_ACPI_FIXTURES) $(FUZZ_EXTRACT)
	@mkdir -p $(@D)
	@for m in $(FUZZ_ACPI_FIXTURES); do \
	    d=$$(dirname $$m); n=$$(basename $$d); \
	    $(FUZZ_PYTHON) $(FUZZ_EXTRACT) --seed $$d $(@D)/$$n || exit 1; \
	    $(FUZZ_PYTHON) $(FUZZ_EXTRACT) --seed --fix-checksums $$d $(@D)/$$n-fix || exit 1; \
	done
	@touch $@

# $(call fuzz_run,NAME,SECONDS): runs build/fuzz/fuzz_NAME; leaves execs/crashes in the shell
# variables and the fuzzer's output in build/fuzz/fuzz_NAME.log.
define fuzz_run
mkdir -p $(FUZZ_OUT)/corpus/$(1) $(FUZZ_OUT)/artifacts-$(1); \
rm -f $(FUZZ_OUT)/artifacts-$(1)/*; \
./$(FUZZ_OUT)/fuzz_$(1) -max_total_time=$(2) -max_len=8192 -print_final_stats=1 \
    -artifact_prefix=$(FUZZ_OUT)/artifacts-$(1)/ $(FUZZ_OUT)/corpus/$(1) $(FUZZ_OUT)/seeds/$(1) \
    > $(FUZZ_OUT)/fuzz_$(1).log 2>&1; rc=$$?; \
execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_OUT)/fuzz_$(1).log); \
[ -n "$$execs" ] || execs=$$(grep -Eo '^#[0-9]+' $(FUZZ_OUT)/fuzz_$(1).log | tail -1 | tr -d '#'); \
crashes=$$(ls $(FUZZ_OUT)/artifacts-$(1) | wc -l); \
[ $$rc = 0 ] || [ $$crashes != 0 ] || crashes=1; \
echo "fuzz_$(1): $(2) s, $${execs:-?} executions, $$crashes crash(es)"; \
if [ $$crashes != 0 ]; then grep -m1 -A12 'ERROR\|==ERROR\|deadly signal' $(FUZZ_OUT)/fuzz_$(1).log; \
    ls $(FUZZ_OUT)/artifacts-$(1); fi
endef

FUZZ_TARGETS := $(FUZZ_OUT)/fuzz_acpi $(FUZZ_OUT)/seeds/acpi/.stamp \
                $(FUZZ_OUT)/fuzz_smbios $(FUZZ_OUT)/seeds/smbios/.stamp

.PHONY: fuzz fuzz-short
fuzz: $(FUZZ_TARGETS)
	@failed=0; \
	$(call fuzz_run,acpi,$(FUZZ_SECONDS)); [ $$crashes = 0 ] || failed=1; \
	$(call fuzz_run,smbios,$(FUZZ_SECONDS)); [ $$crashes = 0 ] || failed=1; \
	exit $$failed

fuzz-short: $(FUZZ_TARGETS)
	@passed=0 failed=0; \
	$(call fuzz_run,acpi,20); if [ $$crashes = 0 ]; then passed=$$((passed + 1)); else failed=$$((failed + 1)); fi; \
	$(call fuzz_run,smbios,10); if [ $$crashes = 0 ]; then passed=$$((passed + 1)); else failed=$$((failed + 1)); fi; \
	echo "fuzz: $$passed passed, $$failed failed"; [ $$failed = 0 ]
