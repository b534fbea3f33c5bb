# scripts/headers.mk - the library's headers under the names its users include.
#
# Each header of the library sits beside its source (drivers/hpet.h, lib/time/tick.h,
# lib/fmt.h); everybody, the library itself included, includes it as "ticklab/NAME.h", the
# name a library user gets from `make lib` (build/include/ticklab/). In the tree that name
# is a farm of links, build/gen/ticklab/NAME.h -> the header, remade whenever the set of
# headers changes: compile with -Ibuild/gen and make the farm an order-only prerequisite.
# Names are unique across drivers/, lib/, lib/time/ and lib/port/ (scripts/check-layers.py checks it).
# Included by the top Makefile and by the test makefiles, which also work alone.
ifndef TICKLAB_HEADERS_MK
TICKLAB_HEADERS_MK := 1
TL_HDRS  := $(wildcard drivers/*.h lib/*.h lib/time/*.h lib/port/*.h)
HDR_FARM := build/gen/ticklab/.headers
.PHONY: ticklab-headers-force
ticklab-headers-force:
$(HDR_FARM): ticklab-headers-force
	@mkdir -p $(dir $@)
	@echo '$(sort $(TL_HDRS))' | cmp -s - $@ 2>/dev/null || { \
	    rm -f $(dir $@)*.h; \
	    for h in $(TL_HDRS); do ln -sf "$(CURDIR)/$$h" $(dir $@); done; \
	    echo '$(sort $(TL_HDRS))' > $@; }
endif
