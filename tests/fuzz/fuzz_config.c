/*
 * fuzz_config.c — libFuzzer target for the parsing of configuration
 * variables (core/config.c): every registered section (IBX_*, MPILITE_RUN_*)
 * read from an environment the input sets, through ibx_config_reload(), and
 * ibx_config_parse_size() on its own.
 *
 * Input: lines; the first byte of a line picks a variable (modulo the
 * number of variables of all sections), the rest is its value. After the
 * reload each field must hold what its type's parser makes of the value
 * (INT: ibx_config_parse_size; BOOL: y/yes/1/on/true, n/no/0/off/false;
 * STR: the text itself), or its default when the value was malformed or
 * empty, and ibx_config_is_set must say which.
 *
 *   make fuzz && build/fuzz/fuzz_config $(mktemp -d) tests/fuzz/corpus/fuzz_config
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ibx_int.h"
#include "config_table.h"
#include "dtype_rdma/dt_config.h"
#include "qp/qp_config.h"
#include "reg_cache/rcache_config.h"
#include "rma/rma_config.h"
#include "shm_lf/shm_config.h"
#include "mpil_config.h"
#include "run/run_config.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Named here, so that each is linked (and registers itself). */
static ibx_config_section_t *const sections[] = {
    &ibx_core_config_section,	&ibx_dt_config_section,	  &ibx_qp_config_section,
    &ibx_rcache_config_section, &ibx_rma_config_section,  &ibx_shm_config_section,
    &mpil_config_section,	&mpil_run_config_section,
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static unsigned nvars;
static FILE *devnull;

static void env_name(const ibx_config_section_t *s, const ibx_config_field_t *f, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%s%s", s->prefix, f->name);
}

static void unset_all(void)
{
	char name[128];

	for (size_t i = 0; i < NSECTIONS; i++)
		for (unsigned j = 0; j < sections[i]->nfields; j++) {
			env_name(sections[i], &sections[i]->fields[j], name, sizeof(name));
			unsetenv(name);
		}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < NSECTIONS; i++)
		nvars += sections[i]->nfields;
	devnull = fopen("/dev/null", "w");
	if (!devnull || !nvars)
		abort();
	unset_all();
	return 0;
}

static int bool_of(const char *s)
{
	static const char *const yes[] = {"y", "yes", "1", "on", "true"};
	static const char *const no[] = {"n", "no", "0", "off", "false"};

	for (size_t i = 0; i < 5; i++) {
		if (!strcasecmp(s, yes[i]))
			return 1;
		if (!strcasecmp(s, no[i]))
			return 0;
	}
	return -1;
}

/* The field must hold what @text (the value, or the default) means. */
static bool holds(const ibx_config_field_t *f, const void *field, const char *text)
{
	int64_t v;

	switch (f->type) {
	case IBX_CONFIG_T_STR: return !strcmp(*(const char *const *)field, text);
	case IBX_CONFIG_T_INT:
		return ibx_config_parse_size(text, &v) == IBX_OK && *(const int64_t *)field == v;
	case IBX_CONFIG_T_BOOL: return bool_of(text) == (int)*(const bool *)field;
	}
	return false;
}

static bool valid(const ibx_config_field_t *f, const char *text)
{
	int64_t v;

	switch (f->type) {
	case IBX_CONFIG_T_STR: return true;
	case IBX_CONFIG_T_INT: return ibx_config_parse_size(text, &v) == IBX_OK;
	case IBX_CONFIG_T_BOOL: return bool_of(text) >= 0;
	}
	return false;
}

static void check_all(void)
{
	char name[128];

	for (size_t i = 0; i < NSECTIONS; i++) {
		ibx_config_section_t *s = sections[i];

		for (unsigned j = 0; j < s->nfields; j++) {
			const ibx_config_field_t *f = &s->fields[j];
			const void *field = (const char *)s->values + f->offset;
			const char *v;
			bool set;

			env_name(s, f, name, sizeof(name));
			v = getenv(name);
			set = v && *v && valid(f, v);
			FUZZ_FAIL_IF(ibx_config_is_set(s, field) != set ||
					 !holds(f, field, set ? v : f->def),
				     "a variable's field does not hold what its value means (or "
				     "is_set is wrong)");
		}
	}
}

/* A size that parses prints back as a decimal that parses to itself; plain
 * digits are decimal, leading zeros or not (not octal). */
static void check_size(const uint8_t *data, size_t size)
{
	char text[64], back[32];
	int64_t v, w;

	if (size >= sizeof(text))
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (ibx_config_parse_size(text, &v) != IBX_OK)
		return;
	snprintf(back, sizeof(back), "%lld", (long long)v);
	FUZZ_FAIL_IF(ibx_config_parse_size(back, &w) != IBX_OK || w != v,
		     "size does not print back to itself");
	FUZZ_FAIL_IF(size > 0 && size <= 18 && strspn(text, "0123456789") == size &&
			 v != strtoll(text, NULL, 10),
		     "digits not read as a decimal number");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *save = NULL, name[128];

	check_size(data, size);
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned k = (unsigned char)line[0] % nvars;
		size_t i = 0;

		while (k >= sections[i]->nfields)
			k -= sections[i++]->nfields;
		env_name(sections[i], &sections[i]->fields[k], name, sizeof(name));
		setenv(name, line + 1, 1);
	}
	(void)ibx_config_reload();
	check_all();
	ibx_config_print(devnull);
	ibx_config_print_markdown(devnull);
	unset_all();
	(void)ibx_config_reload();
	free(text);
	return 0;
}
