# ibx — GNU Makefile.
#
#   make                      build everything into $(BUILD)
#   make check                install missing Debian packages, build, run every suite
#                             (sanitizer and fuzz lanes included: tests/run-tests.sh)
#   make demo                 the main job: build and run a multi-rank program
#   make SAN=address|thread   sanitizer build (into build-asan / build-tsan)
#   make WERROR=1             warnings are errors (CI)
#   make CC=clang             any C11 compiler
#   make install PREFIX=/opt/ibx
#   make format / format-check
#   make fuzz                 libFuzzer targets (clang) into $(BUILD)/fuzz
#
# Sources are found by directory: every core/**/*.c goes into libibx,
# mpi-lite/*.c into libmpilite, tools/ibtest/*.c into ibtest,
# tests/unit/test_*.c and tests/mpi/*.c become one test program each.

ifeq ($(origin CC),default)
CC = gcc
endif
# mpilite-cxx's compiler: the C++ one of the same family as CC
ifeq ($(origin CXX),default)
CXX = $(if $(findstring clang,$(CC)),clang++,g++)
endif
PREFIX ?= /usr/local
SAN ?=
WERROR ?=
OPT ?= -O2

ifeq ($(SAN),address)
BUILD ?= build-asan
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SAN),thread)
BUILD ?= build-tsan
SANFLAGS = -fsanitize=thread -fno-omit-frame-pointer
else
BUILD ?= build
SANFLAGS =
endif

PKGS := pmix libibverbs librdmacm numa
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

# The build configuration that MPI_Get_library_version, `mpilite-run
# --version` and `ibtest info` report (mpi-lite/version.c, the one object
# that gets it; it is recompiled when it changes, a new commit included).
GIT_COMMIT := $(shell test -e .git && git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
pkg_version = $(shell pkg-config --modversion $(1) 2>/dev/null || echo not found)
cstring = '"$(subst ','\'',$(subst ",\",$(subst \,\\,$(strip $(1)))))"'
BUILDINFO := $(GIT_COMMIT) $(foreach p,$(PKGS),$(p)=$(call pkg_version,$(p)))
BUILDINFO_DEFS = -DIBX_BUILD_GIT=$(call cstring,$(GIT_COMMIT)) -DIBX_BUILD_CC=$(call cstring,$(CC)) \
	-DIBX_BUILD_CFLAGS=$(call cstring,$(CFLAGS)) \
	-DIBX_BUILD_SAN=$(call cstring,$(patsubst -fsanitize=%,%,$(filter -fsanitize=%,$(SANFLAGS) $(CFLAGS)))) \
	-DIBX_BUILD_PMIX=$(call cstring,$(call pkg_version,pmix)) \
	-DIBX_BUILD_IBVERBS=$(call cstring,$(call pkg_version,libibverbs)) \
	-DIBX_BUILD_RDMACM=$(call cstring,$(call pkg_version,librdmacm)) \
	-DIBX_BUILD_NUMA=$(call cstring,$(call pkg_version,numa))

WARN = -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifneq ($(WERROR),)
WARN += -Werror
endif
CFLAGS ?= $(OPT) -g
# Hidden by default: the libraries export what their public headers mark
# (IBX_API in ibx.h, MPIL_API in mpi.h), nothing else.
ALL_CFLAGS = -std=gnu11 -fPIC -fvisibility=hidden -pthread $(WARN) $(CFLAGS) $(SANFLAGS) \
	-Iinclude -Icore -Impi-lite/include -Impi-lite $(PKG_CFLAGS) -MMD -MP
LDLIBS_ALL = $(PKG_LIBS) -lpthread -lm -ldl -lrt
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

IBX_SRCS := $(sort $(wildcard core/*.c core/*/*.c))
MPIL_SRCS := $(sort $(wildcard mpi-lite/*.c))
RUN_SRCS := $(sort $(wildcard mpi-lite/run/*.c))
IBTEST_SRCS := $(sort $(wildcard tools/ibtest/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_HELPER_SRCS := $(filter-out tests/unit/test_%,$(sort $(wildcard tests/unit/*.c)))
MPITEST_SRCS := $(sort $(wildcard tests/mpi/*.c))
# MPI programs that only the verbs lane's two-node part runs (fault scenarios)
RXETEST_SRCS := $(sort $(wildcard tests/rxe/*.c))
# Engine programs that tests/sh scenarios drive (dtype_extents.c is built by
# its scenario with mpilite-cc and Open MPI's mpicc, the way users build).
SHTEST_SRCS := $(filter-out tests/sh/dtype_extents.c,$(sort $(wildcard tests/sh/*.c)))
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
BENCH_SRCS := $(sort $(wildcard bench/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
IBX_OBJS := $(call obj,$(IBX_SRCS))
MPIL_OBJS := $(call obj,$(MPIL_SRCS))
RUN_OBJS := $(call obj,$(RUN_SRCS))
IBTEST_OBJS := $(call obj,$(IBTEST_SRCS))
UNIT_HELPER_OBJS := $(call obj,$(UNIT_HELPER_SRCS))

LIBIBX_A := $(BUILD)/lib/libibx.a
LIBIBX_SO := $(BUILD)/lib/libibx.so
LIBMPIL_A := $(BUILD)/lib/libmpilite.a
LIBMPIL_SO := $(BUILD)/lib/libmpilite.so
MPIRUN_BIN := $(BUILD)/bin/mpilite-run
MPICC_BIN := $(BUILD)/bin/mpilite-cc
MPICXX_BIN := $(BUILD)/bin/mpilite-cxx
IBTEST_BIN := $(BUILD)/bin/ibtest
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
MPITEST_BINS := $(patsubst tests/mpi/%.c,$(BUILD)/tests/mpi/%,$(MPITEST_SRCS))
RXETEST_BINS := $(patsubst tests/rxe/%.c,$(BUILD)/tests/rxe/%,$(RXETEST_SRCS))
SHTEST_BINS := $(patsubst tests/sh/%.c,$(BUILD)/tests/sh/%,$(SHTEST_SRCS))
# Examples link the shared libraries, as an application would (engine
# examples: libibx.so; MPI examples: libmpilite.so); none under sanitizers.
EXAMPLE_BINS := $(if $(SAN),,$(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS)))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
# LD_PRELOAD libraries of the benchmark scripts (none under sanitizers: a
# preloaded sanitizer runtime would have to come first)
BENCH_PRELOADS := $(if $(SAN),,$(patsubst bench/preload/%.c,$(BUILD)/bench/%.so,$(sort $(wildcard bench/preload/*.c))))

LIBS := $(LIBIBX_A) $(LIBMPIL_A)
ifeq ($(SAN),)
LIBS += $(LIBIBX_SO) $(LIBMPIL_SO)
endif

.PHONY: all libs tests check check-unit check-mpi check-verbs check-progs demo deps install \
	uninstall clean format format-check bench fuzz FORCE
all: libs $(MPIRUN_BIN) $(MPICC_BIN) $(MPICXX_BIN) $(IBTEST_BIN) tests $(BUILD)/ibx.pc $(BUILD)/mpilite.pc
libs: $(LIBS)
tests: $(UNIT_BINS) $(MPITEST_BINS) $(RXETEST_BINS) $(SHTEST_BINS) $(BENCH_BINS) $(BENCH_PRELOADS) \
	$(EXAMPLE_BINS)

# Objects are rebuilt when the compiler or its flags change, not only when
# their sources do (the stamp holds the last command line).
FLAGS_STAMP := $(BUILD)/.cflags
$(shell mkdir -p $(BUILD); echo '$(CC) $(ALL_CFLAGS)' | cmp -s - $(FLAGS_STAMP) || \
	echo '$(CC) $(ALL_CFLAGS)' > $(FLAGS_STAMP))

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

VERSION_OBJ := $(call obj,mpi-lite/version.c)
BUILDINFO_STAMP := $(BUILD)/.buildinfo
$(shell echo '$(BUILDINFO)' | cmp -s - $(BUILDINFO_STAMP) || echo '$(BUILDINFO)' > $(BUILDINFO_STAMP))
$(VERSION_OBJ): ALL_CFLAGS += $(BUILDINFO_DEFS)
$(VERSION_OBJ): $(BUILDINFO_STAMP)

$(LIBIBX_A): $(IBX_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(LIBIBX_SO): $(IBX_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libibx.so.0 $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
	ln -sf libibx.so $@.0
$(LIBMPIL_A): $(MPIL_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
# libmpilite.so carries the engine inside it (the engine's internal calls
# are not exported by libibx.so); its version script keeps the engine's own
# public names local too, so it exports only what mpi.h declares.
$(LIBMPIL_SO): $(MPIL_OBJS) $(IBX_OBJS) mpi-lite/libmpilite.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libmpilite.so.0 -Wl,--version-script=mpi-lite/libmpilite.map \
		$(ALL_LDFLAGS) -o $@ $(MPIL_OBJS) $(IBX_OBJS) $(LDLIBS_ALL)
	ln -sf libmpilite.so $@.0

# (with mpi-lite's version.c alone, for --version)
$(MPIRUN_BIN): $(RUN_OBJS) $(VERSION_OBJ) $(LIBIBX_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(RUN_OBJS) $(VERSION_OBJ) $(LIBIBX_A) $(LDLIBS_ALL)
# ibtest links mpi-lite (its one-sided commands are MPI programs; `ibtest info`
# prints mpi-lite's configuration and collective table from it) and, for
# `ibtest info`, mpilite-run's configuration section.
IBTEST_CONFIG_OBJS := $(call obj,mpi-lite/run/run_config.c)
$(IBTEST_BIN): $(IBTEST_OBJS) $(IBTEST_CONFIG_OBJS) $(LIBMPIL_A) $(LIBIBX_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(IBTEST_OBJS) $(IBTEST_CONFIG_OBJS) $(LIBMPIL_A) $(LIBIBX_A) $(LDLIBS_ALL)

# mpilite-cc and mpilite-cxx: one script for both languages
# (mpi-lite/mpilite-cc.in), which knows where it was built or installed.
# $(call wrapper,NAME,LANGUAGE,COMPILER,ITS VARIABLE,INCDIR,LIBDIR,SANFLAGS)
wrapper = sed -e 's|@NAME@|$(1)|g' -e 's|@LANGUAGE@|$(2)|g' -e 's|@COMPILER@|$(3)|g' \
	-e 's|@COMPILER_VAR@|$(4)|g' -e 's|@INCDIR@|$(5)|g' -e 's|@LIBDIR@|$(6)|g' \
	-e 's|@SANFLAGS@|$(7)|g' -e 's|@LIBS@|$(PKG_LIBS) -lpthread -lm -ldl -lrt|g' mpi-lite/mpilite-cc.in
$(MPICC_BIN): mpi-lite/mpilite-cc.in Makefile
	@mkdir -p $(dir $@)
	$(call wrapper,mpilite-cc,C,$(CC),MPILITE_CC,$(abspath mpi-lite/include),$(abspath $(BUILD)/lib),$(SANFLAGS)) > $@
	chmod +x $@
$(MPICXX_BIN): mpi-lite/mpilite-cc.in Makefile
	@mkdir -p $(dir $@)
	$(call wrapper,mpilite-cxx,C++,$(CXX),MPILITE_CXX,$(abspath mpi-lite/include),$(abspath $(BUILD)/lib),$(SANFLAGS)) > $@
	chmod +x $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(UNIT_HELPER_OBJS) $(LIBIBX_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(UNIT_HELPER_OBJS) $(LIBIBX_A) $(CMOCKA_LIBS) $(LDLIBS_ALL)

$(BUILD)/tests/mpi/%: tests/mpi/%.c $(LIBMPIL_A) $(LIBIBX_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBMPIL_A) $(LIBIBX_A) $(LDLIBS_ALL)

$(BUILD)/tests/rxe/%: tests/rxe/%.c tests/mpi/mpitest.h $(LIBMPIL_A) $(LIBIBX_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/mpi $(ALL_LDFLAGS) -o $@ $< $(LIBMPIL_A) $(LIBIBX_A) $(LDLIBS_ALL)

$(BUILD)/tests/sh/%: tests/sh/%.c $(LIBIBX_A) $(wildcard tests/sh/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBIBX_A) $(LDLIBS_ALL)
# (bind_plan compiles mpilite-run's bind.c in: launcher_binding.sh)
$(BUILD)/tests/sh/bind_plan: $(wildcard mpi-lite/run/*.[ch])

# An example that includes mpi.h is an MPI program; the others use the engine.
$(BUILD)/examples/%: examples/%.c $(LIBIBX_SO) $(LIBMPIL_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) \
		$$(grep -q '^#include <mpi.h>' $< && echo -lmpilite || echo -libx)

$(BUILD)/bench/%: bench/%.c $(LIBMPIL_A) $(LIBIBX_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBMPIL_A) $(LIBIBX_A) $(LDLIBS_ALL)

$(BUILD)/bench/%.so: bench/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $< -ldl

# Fuzz targets (clang libFuzzer, whatever CC is): make fuzz builds every
# tests/fuzz/fuzz_*.c into $(BUILD)/fuzz/, linked against one archive of
# libibx, libmpilite and mpilite-run's parts (main.c aside) compiled once
# with the same instrumentation (ASan + UBSan, any UB a crash). A target
# that compiles a source file in whole to reach a static parser (#include
# "run/bind.c", as tests/sh/bind_plan.c does) defines every symbol of that
# file, so the archive's copy of it is not linked. `tests/run-tests.sh fuzz`
# runs each for a bounded time on its corpus (tests/fuzz/corpus/<target>/).
FUZZ_CC ?= clang
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_CFLAGS = -std=gnu11 -g -O1 -pthread -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Icore -Impi-lite/include -Impi-lite $(PKG_CFLAGS) -MMD -MP
FUZZ_LIB_SRCS := $(IBX_SRCS) $(MPIL_SRCS) $(filter-out mpi-lite/run/main.c,$(RUN_SRCS))
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_LIB_SRCS))
FUZZ_LIB := $(FUZZ_BUILD)/libibx-fuzz.a
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRCS))
FUZZ_STAMP := $(FUZZ_BUILD)/.cflags

fuzz: $(FUZZ_BINS)
# (rewritten only when the compiler or its flags change: objects follow it)
$(FUZZ_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(FUZZ_CC) $(FUZZ_CFLAGS)' | cmp -s - $@ || echo '$(FUZZ_CC) $(FUZZ_CFLAGS)' > $@
$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) $(FUZZ_STAMP)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Itests/fuzz -o $@ $< $(FUZZ_LIB) $(LDLIBS_ALL)
FORCE:

$(BUILD)/%.pc: %.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' $< > $@

deps:
	@scripts/deps.sh

# Beyond the suites of this build, tests/run-tests.sh builds and runs its
# sanitizer and fuzz lanes itself: unit and MPI under ASan + UBSan
# ($(BUILD)-asan), the lock-free and threaded tests under TSan
# ($(BUILD)-tsan), the libFuzzer targets ($(BUILD)/fuzz).
check: deps
	$(MAKE) all WERROR=$(WERROR)
	BUILD=$(BUILD) WERROR=$(WERROR) tests/run-tests.sh

# What the unit and MPI suites run (the sanitizer lanes build only these).
check-progs: libs $(MPIRUN_BIN) $(UNIT_BINS) $(MPITEST_BINS)

check-unit: all
	BUILD=$(BUILD) tests/run-tests.sh unit
check-mpi: all
	BUILD=$(BUILD) tests/run-tests.sh mpi
# On a machine with real RDMA hardware: the verbs suites on it, no VM.
check-verbs: all
	BUILD=$(BUILD) IBX_VERBS_NATIVE=1 tests/run-tests.sh verbs

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) scripts/demo.sh

bench: all
	BUILD=$(BUILD) bench/compare.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/ibx.h mpi-lite/include/mpi.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBIBX_A) $(LIBMPIL_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBIBX_SO) $(DESTDIR)$(PREFIX)/lib/libibx.so.0
	install -m 755 $(LIBMPIL_SO) $(DESTDIR)$(PREFIX)/lib/libmpilite.so.0
	ln -sf libibx.so.0 $(DESTDIR)$(PREFIX)/lib/libibx.so
	ln -sf libmpilite.so.0 $(DESTDIR)$(PREFIX)/lib/libmpilite.so
	install -m 644 $(BUILD)/ibx.pc $(BUILD)/mpilite.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 755 $(MPIRUN_BIN) $(IBTEST_BIN) $(DESTDIR)$(PREFIX)/bin/
	$(call wrapper,mpilite-cc,C,cc,MPILITE_CC,$(PREFIX)/include,$(PREFIX)/lib,) \
	    > $(DESTDIR)$(PREFIX)/bin/mpilite-cc
	$(call wrapper,mpilite-cxx,C++,c++,MPILITE_CXX,$(PREFIX)/include,$(PREFIX)/lib,) \
	    > $(DESTDIR)$(PREFIX)/bin/mpilite-cxx
	chmod 755 $(DESTDIR)$(PREFIX)/bin/mpilite-cc $(DESTDIR)$(PREFIX)/bin/mpilite-cxx

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,include/ibx.h include/mpi.h lib/libibx.a \
	  lib/libmpilite.a lib/libibx.so lib/libibx.so.0 lib/libmpilite.so lib/libmpilite.so.0 \
	  lib/pkgconfig/ibx.pc lib/pkgconfig/mpilite.pc bin/mpilite-run bin/mpilite-cc bin/mpilite-cxx bin/ibtest)

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	@clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf build build-asan build-tsan

-include $(shell find $(BUILD)/obj $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
