# report/: the results library both programs link (dpusim and dpusim-hw):
# the report (build, validate, write as JSON, read back), its SQLite store,
# JSON text, files written whole or not at all, and the build's version.
# Uses sim/ and models/ (the option and operation vocabularies); never tools/.
REPORT_OBJS := \
	$(BUILD)/report/report.o \
	$(BUILD)/report/report_read.o \
	$(BUILD)/report/json.o \
	$(BUILD)/report/db.o \
	$(BUILD)/report/atomic.o
UNIT_TESTS += report db atomic
E2E_TESTS += report-schema.sh

# The version (tools/version: git describe, else VERSION) in a generated
# source that is rewritten only when the version changes, so a new commit
# relinks the binaries and nothing is recompiled otherwise.
REPORT_OBJS += $(BUILD)/report/version.o
$(BUILD)/report/version.c: FORCE
	@mkdir -p $(dir $@)
	@printf 'const char dpusim_version[] = "%s";\n' "$$(tools/version)" >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/report/version.o: $(BUILD)/report/version.c | $(DEPS_OK)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -include report/version.h -c -o $@ $<

LIB_OBJS += $(REPORT_OBJS)
