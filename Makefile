# Grapevine: the whole build. `make`, `make test`, `make perf`, `make info`,
# `make install PREFIX=...`. Backends are detected; force one off with UCX=0.
SHELL   := /bin/bash
BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= cc
OPT     ?= -O2 -g
UNAME_M := $(shell uname -m)

have_pc = $(shell pkg-config --exists $(1) 2>/dev/null && echo 1 || echo 0)
HWLOC ?= $(call have_pc,hwloc)
UCX   ?= $(call have_pc,ucx)
OFI   ?= $(call have_pc,libfabric)
MPI   ?= $(call have_pc,ompi-c)
PMIX  ?= $(call have_pc,pmix)
CRITERION ?= $(call have_pc,criterion)
FUZZ_CC   ?= $(shell command -v clang >/dev/null 2>&1 && echo clang)

WARN    := -Wall -Wextra -Wundef -Wstrict-prototypes -Wshadow -Wno-unused-parameter
CFLAGS  += -std=gnu11 $(OPT) $(WARN) -fPIC -MMD -MP -pthread
CFLAGS  += -Iinclude -I$(BUILD)/include -I. -DGV_HAVE_HWLOC=$(HWLOC) -DGV_HAVE_UCX=$(UCX) \
           -DGV_HAVE_OFI=$(OFI) -DGV_HAVE_MPI=$(MPI) -DGV_HAVE_PMIX=$(PMIX)
BASE_LIBS := -pthread -lm -lrt
LDLIBS  += $(BASE_LIBS)

PKGS :=
ifeq ($(HWLOC),1)
PKGS += hwloc
endif
ifeq ($(UCX),1)
PKGS += ucx
endif
ifeq ($(OFI),1)
PKGS += libfabric
endif
ifeq ($(MPI),1)
PKGS += ompi-c
endif
ifeq ($(PMIX),1)
PKGS += pmix
endif
ifneq ($(strip $(PKGS)),)
CFLAGS += $(shell pkg-config --cflags $(PKGS))
LDLIBS += $(shell pkg-config --libs $(PKGS))
endif

# Library sources: every .c in the layer folders, minus backends that are
# switched off. Programs with a main() live in tools/, above every layer.
TOOLS    := $(patsubst tools/%.c,%,$(wildcard tools/*.c))
LIB_SRCS := $(wildcard core/*.c transports/*.c aggregator/*.c tasking/*.c dsm/*.c runtime/*.c)
ifneq ($(UCX),1)
LIB_SRCS := $(filter-out transports/ucx.c,$(LIB_SRCS))
endif
ifneq ($(OFI),1)
LIB_SRCS := $(filter-out transports/ofi.c,$(LIB_SRCS))
endif
ifneq ($(MPI),1)
LIB_SRCS := $(filter-out transports/mpi.c core/boot_mpi.c,$(LIB_SRCS))
endif
ifneq ($(PMIX),1)
LIB_SRCS := $(filter-out core/boot_pmix.c,$(LIB_SRCS))
endif
ASM_SRCS := $(wildcard tasking/arch/ctx_$(patsubst arm64,aarch64,$(UNAME_M)).S)
ifneq ($(ASM_SRCS),)
CFLAGS += -DGV_HAVE_CTX_ASM=1
else
CFLAGS += -DGV_HAVE_CTX_ASM=0
endif

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(ASM_SRCS:%.S=$(BUILD)/obj/%.o)
LIB_A    := $(BUILD)/lib/libgrapevine.a
# Plug-ins: in the shared library, the backends with libraries of their
# own are shared objects in $(BUILD)/lib/grapevine/ (installed in
# $(PREFIX)/lib/grapevine/), loaded with dlopen when a job asks for one
# (core/plugin.h), so libgrapevine.so needs only libc, hwloc and what core
# needs; the static library links them in. The objects that choose
# (core/boot.c, transports/registry.c) are compiled a second time, with
# GV_PLUGINS=1, for the shared library.
PLUGIN_DIR  := $(BUILD)/lib/grapevine
PLUGIN_SRCS :=
PLUGINS     :=
ifeq ($(UCX),1)
PLUGINS     += $(PLUGIN_DIR)/gv_tl_ucx.so
PLUGIN_SRCS += transports/ucx.c
$(PLUGIN_DIR)/gv_tl_ucx.so: $(BUILD)/obj/transports/ucx.o
$(PLUGIN_DIR)/gv_tl_ucx.so: PLUGIN_LIBS = $(shell pkg-config --libs ucx)
endif
ifeq ($(OFI),1)
PLUGINS     += $(PLUGIN_DIR)/gv_tl_ofi.so
PLUGIN_SRCS += transports/ofi.c
$(PLUGIN_DIR)/gv_tl_ofi.so: $(BUILD)/obj/transports/ofi.o
$(PLUGIN_DIR)/gv_tl_ofi.so: PLUGIN_LIBS = $(shell pkg-config --libs libfabric)
endif
ifeq ($(MPI),1)
PLUGINS     += $(PLUGIN_DIR)/gv_tl_mpi.so
PLUGIN_SRCS += transports/mpi.c core/boot_mpi.c
$(PLUGIN_DIR)/gv_tl_mpi.so: $(BUILD)/obj/transports/mpi.o $(BUILD)/obj/core/boot_mpi.o
$(PLUGIN_DIR)/gv_tl_mpi.so: PLUGIN_LIBS = $(shell pkg-config --libs ompi-c)
endif
ifeq ($(PMIX),1)
PLUGINS     += $(PLUGIN_DIR)/gv_boot_pmix.so
PLUGIN_SRCS += core/boot_pmix.c
$(PLUGIN_DIR)/gv_boot_pmix.so: $(BUILD)/obj/core/boot_pmix.o
$(PLUGIN_DIR)/gv_boot_pmix.so: PLUGIN_LIBS = $(shell pkg-config --libs pmix)
endif
SO_TWICE    := core/boot.c transports/registry.c
LIB_SO_OBJS := $(filter-out $(PLUGIN_SRCS:%.c=$(BUILD)/obj/%.o) $(SO_TWICE:%.c=$(BUILD)/obj/%.o),$(LIB_OBJS)) \
               $(SO_TWICE:%.c=$(BUILD)/obj/so/%.o)
# What libgrapevine.so links: no backend's library.
SO_LDLIBS   := -pthread -lm -lrt $(if $(filter 1,$(HWLOC)),$(shell pkg-config --libs hwloc))
LIB_MAP     := $(BUILD)/gen/libgrapevine.map
# gvinfo linked with the shared library, so that -t tells which plug-ins
# load; installed as bin/gvinfo (rpath $$ORIGIN/../lib).
SH_GVINFO   := $(BUILD)/shbin/gvinfo
# The shared library is libgrapevine.so.X.Y.Z with the SONAME
# libgrapevine.so.X.Y: before 1.0 a minor release may change the ABI
# (gv__am_hot's layout is compiled into programs; core/libgrapevine.map).
GV_VER   := $(shell cat VERSION)
SONAME   := libgrapevine.so.$(basename $(GV_VER))
LIB_SO   := $(BUILD)/lib/libgrapevine.so
LIB_SOV  := $(BUILD)/lib/libgrapevine.so.$(GV_VER)
BINS     := $(TOOLS:%=$(BUILD)/bin/%)
# The frameworks library (libgrapevine-fw): one folder per part, built on
# the public headers alone (no -I.), so reaching inside the runtime fails
# to compile; the shared one links against libgrapevine.so, whose internal
# symbols are hidden.
FW_SRCS  := $(wildcard frameworks/*/*.c)
FW_OBJS  := $(FW_SRCS:%.c=$(BUILD)/obj/%.o)
FW_CFLAGS = $(filter-out -I.,$(CFLAGS)) -Iframeworks
FW_A     := $(BUILD)/lib/libgrapevine-fw.a
FW_SONAME := libgrapevine-fw.so.$(basename $(GV_VER))
FW_SO    := $(BUILD)/lib/libgrapevine-fw.so
FW_SOV   := $(BUILD)/lib/libgrapevine-fw.so.$(GV_VER)
# What programs link: the frameworks, then the runtime.
PROG_LIBS = $(FW_A) $(LIB_A)
# SuiteSparse:GraphBLAS, the frameworks' peer in perf/ (perf/grb_*.c).
GRAPHBLAS ?= $(shell test -e /usr/include/GraphBLAS.h && echo 1 || echo 0)
PERF_GRB_SRCS := $(if $(filter 1,$(GRAPHBLAS)),$(wildcard perf/grb_*.c))
PERFS_GRB := $(PERF_GRB_SRCS:perf/%.c=$(BUILD)/perf/%)
PERF_SRCS := $(filter-out perf/grb_%,$(wildcard perf/*.c))
PERFS    := $(PERF_SRCS:perf/%.c=$(BUILD)/perf/%)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNITS    := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
MR_SRCS  := $(wildcard tests/multirank/mr_*.c)
MRS      := $(MR_SRCS:tests/multirank/%.c=$(BUILD)/tests/multirank/%)
# LD_PRELOAD fault injection in front of a real library (UCX, MPI).
PRELOADS := $(if $(filter 1,$(UCX)),$(BUILD)/tests/multirank/preload_hang.so \
              $(BUILD)/tests/multirank/preload_forge_ucx.so)
PRELOADS += $(if $(filter 1,$(MPI)),$(BUILD)/tests/multirank/preload_forge_mpi.so)
# Criterion drivers of the multi-rank tests: one per suite, and one per
# backend in its folder (tests/multirank/<backend>/driver_<backend>.c).
DRIVER_SRCS := $(wildcard tests/multirank/driver*.c tests/multirank/*/driver*.c)
DRIVERS  := $(DRIVER_SRCS:tests/multirank/%.c=$(BUILD)/tests/multirank/%)
# C++ references (Boost.Context) for perf/, built when Boost is there.
BOOST_CTX ?= $(shell test -e /usr/include/boost/context/continuation.hpp && echo 1 || echo 0)
PERF_CXX_SRCS := $(if $(filter 1,$(BOOST_CTX)),$(wildcard perf/*.cpp))
PERFS_CXX := $(PERF_CXX_SRCS:perf/%.cpp=$(BUILD)/perf/%)
CXX ?= c++
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
# Tests of the frameworks: programs run under gvrun (fw_*.c), Criterion
# drivers (driver_*.c), and the sequential reference checkers (check/*.c)
# that only tests link.
FWT_SRCS := $(wildcard tests/frameworks/fw_*.c)
FWTS     := $(FWT_SRCS:tests/frameworks/%.c=$(BUILD)/tests/frameworks/%)
FWT_DRIVER_SRCS := $(wildcard tests/frameworks/driver_*.c)
FWT_DRIVERS := $(FWT_DRIVER_SRCS:tests/frameworks/%.c=$(BUILD)/tests/frameworks/%)
FWT_CHECK_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/frameworks/check/*.c))

# The version: include/grapevine/core.h includes the generated
# grapevine/version.h (GV_VERSION_MAJOR/MINOR/PATCH from VERSION, which
# install copies beside the other headers); core/version.c gets the commit
# from gv_commit.h, rewritten only when `git describe` changes.
VERSION_H := $(BUILD)/include/grapevine/version.h
COMMIT_H  := $(BUILD)/gen/gv_commit.h
GV_COMMIT := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

ifndef V
QUIET_CC   = @printf '  CC    %s\n' $@;
QUIET_LINK = @printf '  LINK  %s\n' $@;
QUIET_AR   = @printf '  AR    %s\n' $@;
endif

.PHONY: all lib tools perf tests test fuzz-run info demo install install-check \
        readme-check readme-table clean layers docs docs-if-doxygen
all: lib tools perf tests $(EXAMPLES)
lib: $(LIB_A) $(LIB_SO) $(FW_A) $(FW_SO) $(PLUGINS)
tools: $(BINS) $(SH_GVINFO)
perf: $(PERFS) $(PERFS_CXX) $(PERFS_GRB)
tests: $(MRS) $(PRELOADS) $(FWTS) $(if $(filter 1,$(CRITERION)),$(UNITS) $(DRIVERS) $(FWT_DRIVERS))

$(VERSION_H): VERSION
	@mkdir -p $(@D)
	@v=$$(cat VERSION); case "$$v" in [0-9]*.[0-9]*.[0-9]*) ;; \
	  *) echo "VERSION says '$$v': want MAJOR.MINOR.PATCH"; exit 1;; esac; \
	  IFS=. read -r ma mi pa <<< "$$v"; \
	  printf '/* Generated from VERSION by the Makefile. SPDX-License-Identifier: BSD-3-Clause */\n#ifndef GRAPEVINE_VERSION_H\n#define GRAPEVINE_VERSION_H\n#define GV_VERSION_MAJOR %s\n#define GV_VERSION_MINOR %s\n#define GV_VERSION_PATCH %s\n#endif\n' \
	    "$$ma" "$$mi" "$$pa" > $@
.PHONY: FORCE
$(COMMIT_H): FORCE
	@mkdir -p $(@D)
	@printf '#define GV_COMMIT "%s"\n' '$(GV_COMMIT)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/obj/core/version.o: $(COMMIT_H)
$(BUILD)/obj/core/version.o: CFLAGS += -I$(BUILD)/gen

$(BUILD)/obj/%.o: %.c | $(VERSION_H)
	@mkdir -p $(@D)
	$(QUIET_CC)$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/obj/%.o: %.S | $(VERSION_H)
	@mkdir -p $(@D)
	$(QUIET_CC)$(CC) $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(QUIET_AR)$(AR) rcs $@ $^
$(BUILD)/obj/so/%.o: %.c | $(VERSION_H)
	@mkdir -p $(@D)
	$(QUIET_CC)$(CC) $(CFLAGS) -DGV_PLUGINS=1 -c $< -o $@
$(BUILD)/obj/core/plugin.o: CFLAGS += -DGV_PLUGIN_LIBDIR='"$(PREFIX)/lib/grapevine"'
$(LIB_MAP): core/libgrapevine.map VERSION
	@mkdir -p $(@D)
	@sed 's/@VERSION@/$(GV_VER)/' $< > $@
$(LIB_SOV): $(LIB_SO_OBJS) $(LIB_MAP)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) -shared -Wl,--version-script=$(LIB_MAP) \
		-Wl,-soname,$(SONAME) -o $@ $(LIB_SO_OBJS) $(SO_LDLIBS)
# A plug-in needs libgrapevine.so (its private node) and its own library;
# -z defs: a symbol the library does not export fails here, not at dlopen.
$(PLUGINS): $(LIB_SO)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) -shared -Wl,-z,defs -o $@ $(filter %.o,$^) \
		-L$(BUILD)/lib -lgrapevine $(PLUGIN_LIBS) -pthread
$(SH_GVINFO): tools/gvinfo.c $(LIB_SO)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lgrapevine \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(LIB_SO): $(LIB_SOV)
	@ln -sf $(notdir $(LIB_SOV)) $(@D)/$(SONAME)
	@ln -sf $(SONAME) $@

$(BUILD)/obj/frameworks/%.o: frameworks/%.c | $(VERSION_H)
	@mkdir -p $(@D)
	$(QUIET_CC)$(CC) $(FW_CFLAGS) -c $< -o $@
$(FW_A): $(FW_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(QUIET_AR)$(AR) rcs $@ $^
$(FW_SOV): $(FW_OBJS) $(LIB_SO)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) -shared -Wl,-soname,$(FW_SONAME) -o $@ $(FW_OBJS) \
		-L$(BUILD)/lib -lgrapevine -lm -pthread
$(FW_SO): $(FW_SOV)
	@ln -sf $(notdir $(FW_SOV)) $(@D)/$(FW_SONAME)
	@ln -sf $(FW_SONAME) $@

# Programs link the static libraries so that they run from the build tree.
$(BUILD)/bin/%: tools/%.c $(PROG_LIBS)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -o $@ $< $(PROG_LIBS) $(LDLIBS)
$(BUILD)/perf/grb_%: perf/grb_%.c
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -fopenmp -o $@ $< -lgraphblas -lm
$(BUILD)/perf/%: perf/%.c $(PROG_LIBS)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -o $@ $< $(PROG_LIBS) $(LDLIBS)
$(BUILD)/examples/%: examples/%.c $(PROG_LIBS)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(FW_CFLAGS) -o $@ $< $(PROG_LIBS) $(LDLIBS)
$(BUILD)/tests/frameworks/fw_%: tests/frameworks/fw_%.c $(FWT_CHECK_OBJS) $(PROG_LIBS)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(FW_CFLAGS) -Itests/frameworks -o $@ $< $(FWT_CHECK_OBJS) $(PROG_LIBS) $(LDLIBS)
$(BUILD)/obj/tests/frameworks/check/%.o: tests/frameworks/check/%.c | $(VERSION_H)
	@mkdir -p $(@D)
	$(QUIET_CC)$(CC) $(FW_CFLAGS) -Itests/frameworks -c $< -o $@
$(BUILD)/tests/frameworks/driver_%: tests/frameworks/driver_%.c $(FWT_CHECK_OBJS) $(PROG_LIBS)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -Itests/frameworks -DGV_BUILD_DIR='"$(BUILD)"' -o $@ $< $(FWT_CHECK_OBJS) $(PROG_LIBS) $(LDLIBS) -lcriterion
$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_A)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -DGV_SOURCE_DIR='"$(CURDIR)"' -o $@ $< $(LIB_A) $(LDLIBS) -lcriterion
$(BUILD)/tests/multirank/mr_%: tests/multirank/mr_%.c tests/multirank/mr.h $(LIB_A)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)
$(BUILD)/tests/multirank/preload_%.so: tests/multirank/preload_%.c
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -shared -o $@ $< -ldl
# preload_forge_mpi.so calls PMPI_Send and friends: link it against MPI.
$(BUILD)/tests/multirank/preload_forge_mpi.so: tests/multirank/preload_forge_mpi.c
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -shared -o $@ $< $(shell pkg-config --libs ompi-c)
$(BUILD)/perf/%: perf/%.cpp
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CXX) -O2 -g -Wall -Wextra -o $@ $< -lboost_context
$(DRIVERS): $(BUILD)/tests/multirank/%: tests/multirank/%.c $(LIB_A)
	@mkdir -p $(@D)
	$(QUIET_LINK)$(CC) $(CFLAGS) -DGV_BUILD_DIR='"$(BUILD)"' -o $@ $< $(LIB_A) $(LDLIBS) -lcriterion

# The test commands. `make test` runs everything: the unit tests, then
# every multi-rank driver over every built transport (Criterion forks each
# test; the driver puts a time limit on each), then the install, README and
# fuzz checks. `make test-unit` and `make test-multirank` run one part each.
# TEST_ARGS goes to every Criterion binary (TEST_ARGS="--filter 'fault/*'").
# Each ends with "tests: N passed, M failed", summed from its log,
# $(BUILD)/<target>.log.
.PHONY: test-unit test-multirank
TEST_LOG = $(BUILD)/$@.log
TEST_CRITERION = test "$(CRITERION)" = 1 || { echo "make $@: Criterion not found (apt-get install libcriterion-dev)"; exit 1; }
TEST_UNITS = set -eo pipefail; for t in $(UNITS); do echo "== $$t"; \
    $$t --jobs 2 $(TEST_ARGS) 2>&1 | tee -a $(TEST_LOG); done
TEST_DRIVERS = set -eo pipefail; for d in $(DRIVERS) $(FWT_DRIVERS); do echo "== $$d"; \
    $$d --jobs 1 $(TEST_ARGS) 2>&1 | tee -a $(TEST_LOG); done
TEST_SUMMARY = awk '/Synthesis: Tested/ { for (i = 1; i <= NF; i++) { \
      if ($$i == "Passing:") p += $$(i+1); if ($$i == "Failing:") f += $$(i+1); \
      if ($$i == "Crashing:") f += $$(i+1) } } \
    END { printf "tests: %d passed, %d failed\n", p, f }' $(TEST_LOG)

test: all
	@scripts/deps.sh --check
	@$(MAKE) --no-print-directory layers
	@$(TEST_CRITERION)
	@rm -f $(TEST_LOG)
	@$(TEST_UNITS)
	@$(TEST_DRIVERS)
	@$(MAKE) --no-print-directory install-check
	@$(MAKE) --no-print-directory readme-check
	@$(MAKE) --no-print-directory fuzz-run
	@$(MAKE) --no-print-directory docs-if-doxygen
	@$(TEST_SUMMARY)
test-unit: $(if $(filter 1,$(CRITERION)),$(UNITS))
	@$(TEST_CRITERION)
	@rm -f $(TEST_LOG)
	@$(TEST_UNITS)
	@$(TEST_SUMMARY)
test-multirank: all
	@$(TEST_CRITERION)
	@rm -f $(TEST_LOG)
	@$(TEST_DRIVERS)
	@$(TEST_SUMMARY)

# Each folder uses only the layers below it: includes and calls
# (scripts/layers.sh names the file and line, or object and symbol).
layers: lib
	@scripts/layers.sh $(BUILD)

# The README's GV_* table is gvinfo -m's output: check it, or rewrite it.
README_TABLE = sed -n '/^<!-- gvinfo -m/,/^<!-- end gvinfo -m/p' README.md | sed '1d;$$d'
readme-check: tools
	@$(BUILD)/bin/gvinfo -m | diff -u - <($(README_TABLE)) >/dev/null || \
	  { echo "README.md's GV_* table differs from gvinfo -m: run make readme-table"; \
	    $(BUILD)/bin/gvinfo -m | diff -u <($(README_TABLE)) -; exit 1; }
	@echo "== readme-check: the GV_* table matches gvinfo -m"
	@grep -q '`$(SONAME)`' README.md || \
	  { echo "README.md does not name the SONAME $(SONAME) (VERSION changed?)"; exit 1; }
readme-table: tools
	@$(BUILD)/bin/gvinfo -m > $(BUILD)/table.md
	@awk -v t=$(BUILD)/table.md '/^<!-- gvinfo -m/ {print; while ((getline l < t) > 0) print l; skip=1; next} \
	  /^<!-- end gvinfo -m/ {skip=0} !skip' README.md > $(BUILD)/README.new && mv $(BUILD)/README.new README.md

# The README's "first program": install, build it with pkg-config, run it.
INST_PC := PKG_CONFIG_PATH=$(abspath $(BUILD))/inst/lib/pkgconfig pkg-config
# The installed .pc files carry no rpath: the test's programs set their own.
INST_RPATH := -Wl,-rpath,$(abspath $(BUILD))/inst/lib
install-check: lib tools perf
	@rm -rf $(BUILD)/inst
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD))/inst >/dev/null
	@if grep -n 'rpath' $(BUILD)/inst/lib/pkgconfig/*.pc; then \
	  echo "install-check: an rpath in the installed .pc files (above)"; exit 1; fi
	@grep -q '^Requires.private: .*hwloc' $(BUILD)/inst/lib/pkgconfig/grapevine.pc || [ "$(HWLOC)" != 1 ] || \
	  { echo "install-check: grapevine.pc does not name hwloc in Requires.private"; exit 1; }
	@echo "== install-check: grapevine.pc: $$(grep '^Requires.private' $(BUILD)/inst/lib/pkgconfig/grapevine.pc), no rpath"
	@$(CC) examples/hello.c $$($(INST_PC) --cflags --libs grapevine) $(INST_RPATH) \
	  -o $(BUILD)/inst/hello
	@echo "== install-check: hello built against the installed library with pkg-config"
	@GV_TRANSPORT=shm timeout 60 $(BUILD)/inst/bin/gvrun -n 4 $(BUILD)/inst/hello | sort
	@lib=$(BUILD)/inst/lib/$(notdir $(LIB_SOV)); \
	  if readelf -d $$lib | grep NEEDED | grep -E 'lib(ucp|uct|ucs|fabric|mpi|open-pal|open-rte|pmix)'; then \
	    echo "install-check: $$lib needs a backend's library (above): backends must be plug-ins"; exit 1; fi; \
	  echo "== install-check: $(notdir $(LIB_SOV)) needs only: $$(readelf -d $$lib | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
	@GV_PLUGIN_DIR=/nonexistent GV_TRANSPORT=shm timeout 60 $(BUILD)/inst/bin/gvrun -n 2 $(BUILD)/inst/hello >/dev/null
	@echo "== install-check: hello runs over shm with no plug-in folder"
	@$(BUILD)/inst/bin/gvinfo -t | grep -E '^  (ucx|ofi|mpi) |^bootstrap'
	@set -e; for p in $(notdir $(PLUGINS)); do \
	  $(BUILD)/inst/bin/gvinfo -t | grep -q "plug-in $(abspath $(BUILD))/inst/lib/grapevine/$$p loaded" || \
	    { echo "install-check: gvinfo -t does not say the installed $$p loaded"; exit 1; }; done
	@if [ "$(UCX)" = 1 ]; then GV_TRANSPORT=ucx UCX_TLS=sm,self timeout 60 \
	    $(BUILD)/inst/bin/gvrun -n 2 $(BUILD)/inst/hello >/dev/null && \
	  echo "== install-check: hello runs over ucx (plug-in)"; \
	  else echo "== install-check: ucx not built (UCX=0)"; fi
	@if [ "$(OFI)" = 1 ]; then GV_TRANSPORT=ofi FI_PROVIDER='tcp;ofi_rxm' timeout 60 \
	    $(BUILD)/inst/bin/gvrun -n 2 $(BUILD)/inst/hello >/dev/null && \
	  echo "== install-check: hello runs over ofi (plug-in)"; \
	  else echo "== install-check: ofi not built (OFI=0)"; fi
	@$(CC) $(WARN) tests/install/inline_so.c \
	  $$($(INST_PC) --cflags --libs grapevine) $(INST_RPATH) -o $(BUILD)/inst/inline_so
	@GV_TRANSPORT=shm timeout 60 $(BUILD)/inst/bin/gvrun -n 2 $(BUILD)/inst/inline_so
	@readelf -d $(BUILD)/inst/inline_so | grep -q 'NEEDED.*\[$(SONAME)\]' || \
	  { echo "install-check: inline_so does not need $(SONAME)"; exit 1; }
	@echo "== install-check: programs need $(SONAME), the installed library's SONAME"
	@$(CC) $(WARN) examples/actors.c $$($(INST_PC) --cflags --libs grapevine) \
	  $(INST_RPATH) -o $(BUILD)/inst/actors
	@set -e; for t in $$($(BUILD)/inst/bin/gvinfo -t | awk '($$2 == "built;" || ($$2 == "plug-in" && $$4 == "loaded;")) && $$1 != "self" && $$1 != "mpi" {print $$1}'); do \
	  GV_TRANSPORT=$$t GV_TIMEOUT_S=5 timeout 120 $(BUILD)/inst/bin/gvrun -n 3 $(BUILD)/inst/actors --hops 150 \
	    | grep 'the token made 150 hops' >/dev/null || { echo "install-check: actors over $$t failed"; exit 1; }; \
	  GV_TRANSPORT=$$t GV_TIMEOUT_S=5 timeout 120 $(BUILD)/inst/bin/gvrun --keep-going -n 3 $(BUILD)/inst/actors \
	    --hops 150 --kill 2:40 2>/dev/null | grep 'the token made 150 hops (generation 1)' >/dev/null || \
	    { echo "install-check: actors --kill over $$t failed"; exit 1; }; \
	  echo "== install-check: actors (built with pkg-config) over $$t, and with rank 2 killed"; done
	@echo "== install-check: actors not run over mpi (needs mpirun, and MPI has no descriptor to sleep on)"
	@set -e; for p in $(notdir $(PERFS)); do [ -x $(BUILD)/inst/libexec/grapevine/perf/$$p ] || \
	  { echo "install-check: benchmark $$p not installed"; exit 1; }; done
	@$(BUILD)/inst/libexec/grapevine/perf/pingpong -h >/dev/null
	@GV_TRANSPORT=shm timeout 60 $(BUILD)/inst/bin/gvrun -n 2 $(BUILD)/inst/libexec/grapevine/perf/pingpong -s 8 -S 64 -r 1 --csv \
	  | grep -q '^pingpong,shm,2,lat,send_now,64,us,' || { echo "install-check: the installed pingpong did not run"; exit 1; }
	@set -e; for e in $(notdir $(EXAMPLE_SRCS)); do cmp -s examples/$$e $(BUILD)/inst/share/doc/grapevine/examples/$$e || \
	  { echo "install-check: examples/$$e not installed"; exit 1; }; done
	@set -e; for m in gvrun gvinfo; do man -l $(BUILD)/inst/share/man/man1/$$m.1 2>/dev/null | grep -q "^NAME" || \
	  { echo "install-check: share/man/man1/$$m.1 not installed or not readable"; exit 1; }; done
	@echo "== install-check: benchmarks in libexec/grapevine/perf (pingpong ran), examples' sources in share/doc/grapevine/examples, man pages"

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SECONDS ?= 20
fuzz-run: $(VERSION_H)
ifneq ($(FUZZ_CC),)
	@set -e; for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  mkdir -p $(BUILD)/fuzz; \
	  $(FUZZ_CC) -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -I$(BUILD)/include -I. \
	    -DGV_HAVE_HWLOC=0 -DGV_HAVE_UCX=0 -DGV_HAVE_OFI=0 -DGV_HAVE_MPI=0 -DGV_HAVE_PMIX=0 \
	    -DGV_FUZZING=1 -o $(BUILD)/fuzz/$$n $$f; \
	  echo "== fuzz $$n for $(FUZZ_SECONDS)s"; \
	  $(BUILD)/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 2>&1 | tail -2; done
else
	@echo "== fuzz: skipped (no clang: apt-get install clang)"
endif

info: tools
	$(BUILD)/bin/gvinfo -c -t

# The README's first command: packages (as root), build, then the ping-pong
# over the default transport on 2 local ranks.
demo:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory all
	$(BUILD)/bin/gvinfo -t
	$(BUILD)/bin/gvrun -n 2 $(BUILD)/perf/pingpong -S 1048576

# grapevine.pc: the libraries found with pkg-config (those the static
# library links: hwloc, and the backends built) as Requires.private, the
# system ones as Libs.private, and no rpath: a program finds the installed
# library through the loader's path, LD_LIBRARY_PATH, or an rpath of its own.
# The benchmarks go to libexec/grapevine/perf (run them with gvrun), the
# examples' sources and the benchmarks' README to share/doc/grapevine, the
# man pages of gvrun and gvinfo to share/man/man1.
PERF_DIR := $(PREFIX)/libexec/grapevine/perf
DOC_DIR  := $(PREFIX)/share/doc/grapevine
install: lib tools perf
	install -d $(DESTDIR)$(PREFIX)/include/grapevine $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/grapevine.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/grapevine/*.h $(VERSION_H) $(DESTDIR)$(PREFIX)/include/grapevine/
	install -d $(DESTDIR)$(PREFIX)/include/grapevine/fw
	$(if $(wildcard include/grapevine/fw/*.h),install -m 644 include/grapevine/fw/*.h $(DESTDIR)$(PREFIX)/include/grapevine/fw/)
	install -m 644 $(LIB_A) $(FW_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SOV) $(FW_SOV) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(notdir $(LIB_SOV)) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libgrapevine.so
	ln -sf $(notdir $(FW_SOV)) $(DESTDIR)$(PREFIX)/lib/$(FW_SONAME)
	ln -sf $(FW_SONAME) $(DESTDIR)$(PREFIX)/lib/libgrapevine-fw.so
	install -m 755 $(filter-out %/gvinfo,$(BINS)) $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(SH_GVINFO) $(DESTDIR)$(PREFIX)/bin/
	install -d $(DESTDIR)$(PREFIX)/lib/grapevine
	$(if $(PLUGINS),install -m 755 $(PLUGINS) $(DESTDIR)$(PREFIX)/lib/grapevine/)
	printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: grapevine\nDescription: latency-tolerant DSM runtime with pluggable transports\nVersion: %s\nRequires.private: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lgrapevine\nLibs.private: %s\n' \
	  "$(PREFIX)" "$$(cat VERSION)" "$(strip $(PKGS))" "$(BASE_LIBS)" > $(DESTDIR)$(PREFIX)/lib/pkgconfig/grapevine.pc
	printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: grapevine-fw\nDescription: Grapevine frameworks: distributed containers, graphs and engines\nVersion: %s\nRequires: grapevine\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lgrapevine-fw\n' \
	  "$(PREFIX)" "$$(cat VERSION)" > $(DESTDIR)$(PREFIX)/lib/pkgconfig/grapevine-fw.pc
	install -d $(DESTDIR)$(PERF_DIR) $(DESTDIR)$(DOC_DIR)/examples $(DESTDIR)$(DOC_DIR)/perf
	install -m 755 $(PERFS) $(PERFS_CXX) $(PERFS_GRB) $(DESTDIR)$(PERF_DIR)/
	install -m 644 perf/README.md $(DESTDIR)$(DOC_DIR)/perf/
	install -m 644 $(EXAMPLE_SRCS) $(DESTDIR)$(DOC_DIR)/examples/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/man/gvrun.1 docs/man/gvinfo.1 $(DESTDIR)$(PREFIX)/share/man/man1/

# The API reference from the public headers' Doxygen comments, into
# $(BUILD)/docs/html (docs/Doxyfile): an undocumented public function fails
# it. `make test` runs it when doxygen is installed, and says so when not.
docs:
	@command -v doxygen >/dev/null || { echo "make docs: doxygen not found (apt-get install doxygen)"; exit 1; }
	@mkdir -p $(BUILD)/docs
	@GV_DOCS_OUT=$(abspath $(BUILD))/docs doxygen docs/Doxyfile
	@echo "== docs: API reference in $(BUILD)/docs/html/index.html"
docs-if-doxygen:
	@if command -v doxygen >/dev/null; then $(MAKE) --no-print-directory docs; \
	  else echo "== docs: skipped: doxygen not found (apt-get install doxygen)"; fi

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
