/*
 * config.c — the configuration registry: every module's section (config.h)
 * registers itself at load time; a section is parsed from the environment
 * on first use; ibx_config_print / `ibtest info` print every registered
 * variable, and ibx_config_print_markdown the README's table. Also the core
 * section itself (core/config_table.h).
 */
#include "ibx_int.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <strings.h>

/* Guards the registry and the parsing of sections (rare: first use, reload). */
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static ibx_config_section_t *cfg_sections;

ibx_status_t ibx_config_parse_size(const char *s, int64_t *value_p)
{
	char *end;
	long long v;
	int64_t mult = 1;
	const char *digits;

	if (!s || !*s)
		return IBX_ERR_INVALID_PARAM;
	/* decimal, or hex after 0x; not octal: "010" is ten, "08" eight */
	digits = s + strspn(s, " \t\n\v\f\r");
	digits += *digits == '+' || *digits == '-';
	errno = 0;
	v = strtoll(s, &end, digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10);
	if (errno || end == s)
		return IBX_ERR_INVALID_PARAM;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		mult = 1ll << 10;
		end++;
		break;
	case 'm':
		mult = 1ll << 20;
		end++;
		break;
	case 'g':
		mult = 1ll << 30;
		end++;
		break;
	default: break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0')
		return IBX_ERR_INVALID_PARAM;
	if (v > INT64_MAX / mult || v < INT64_MIN / mult)
		return IBX_ERR_OVERFLOW;
	*value_p = (int64_t)v * mult;
	return IBX_OK;
}

static ibx_status_t parse_bool(const char *s, bool *value_p)
{
	if (!strcasecmp(s, "y") || !strcasecmp(s, "yes") || !strcmp(s, "1") ||
	    !strcasecmp(s, "on") || !strcasecmp(s, "true")) {
		*value_p = true;
		return IBX_OK;
	}
	if (!strcasecmp(s, "n") || !strcasecmp(s, "no") || !strcmp(s, "0") ||
	    !strcasecmp(s, "off") || !strcasecmp(s, "false")) {
		*value_p = false;
		return IBX_OK;
	}
	return IBX_ERR_INVALID_PARAM;
}

static ibx_status_t set_field(void *values, const ibx_config_field_t *f, const char *s)
{
	char *field = (char *)values + f->offset;

	switch (f->type) {
	case IBX_CONFIG_T_STR: *(const char **)field = s; return IBX_OK;
	case IBX_CONFIG_T_INT: return ibx_config_parse_size(s, (int64_t *)field);
	case IBX_CONFIG_T_BOOL: return parse_bool(s, (bool *)field);
	}
	return IBX_ERR_INVALID_PARAM;
}

/* Fills the section's values from the environment (defaults where unset
 * or malformed). Called with cfg_lock held. */
static ibx_status_t section_parse(ibx_config_section_t *s)
{
	ibx_status_t ret = IBX_OK;
	uint64_t set = 0;
	char env[96];

	for (unsigned i = 0; i < s->nfields; i++) {
		const ibx_config_field_t *f = &s->fields[i];
		const char *v;

		snprintf(env, sizeof(env), "%s%s", s->prefix, f->name);
		v = getenv(env);
		if (v && !*v)
			v = NULL; /* VAR= means the default, as unset */
		if (v && set_field(s->values, f, v) == IBX_OK) {
			set |= 1ull << i;
			continue;
		}
		if (v) {
			ibx_error("%s=\"%s\" is not a valid value (%s); using the default \"%s\"",
				  env, v, f->help, f->def);
			ret = IBX_ERR_INVALID_PARAM;
		}
		set_field(s->values, f, f->def);
	}
	*s->set_mask = set;
	if (s->apply && s->apply(s->values) != IBX_OK)
		ret = IBX_ERR_INVALID_PARAM;
	return ret;
}

void ibx_config_section_load(ibx_config_section_t *s)
{
	if (__atomic_load_n(&s->loaded, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&cfg_lock);
	if (!s->loaded) {
		(void)section_parse(s);
		__atomic_store_n(&s->loaded, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cfg_lock);
}

void ibx_config_register(ibx_config_section_t *s)
{
	ibx_config_section_t **pp;

	pthread_mutex_lock(&cfg_lock);
	for (pp = &cfg_sections; *pp && strcmp((*pp)->module, s->module) <= 0; pp = &(*pp)->next)
		if (*pp == s)
			goto out;
	s->next = *pp;
	*pp = s;
out:
	pthread_mutex_unlock(&cfg_lock);
}

bool ibx_config_is_set(ibx_config_section_t *s, const void *field)
{
	size_t off = (size_t)((const char *)field - (const char *)s->values);

	ibx_config_section_load(s);
	for (unsigned i = 0; i < s->nfields; i++)
		if (s->fields[i].offset == off)
			return (*s->set_mask >> i) & 1;
	return false;
}

ibx_status_t ibx_config_reload(void)
{
	ibx_status_t ret = IBX_OK;

	pthread_mutex_lock(&cfg_lock);
	for (ibx_config_section_t *s = cfg_sections; s; s = s->next) {
		if (section_parse(s) != IBX_OK)
			ret = IBX_ERR_INVALID_PARAM;
		__atomic_store_n(&s->loaded, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cfg_lock);
	return ret;
}

/* The value of @f as text: into @buf for numbers, the string itself else. */
static const char *field_text(const ibx_config_section_t *s, const ibx_config_field_t *f, char *buf,
			      size_t len)
{
	const char *field = (const char *)s->values + f->offset;

	switch (f->type) {
	case IBX_CONFIG_T_STR: return *(const char *const *)field;
	case IBX_CONFIG_T_INT:
		snprintf(buf, len, "%lld", (long long)*(const int64_t *)field);
		return buf;
	case IBX_CONFIG_T_BOOL: return *(const bool *)field ? "y" : "n";
	}
	return "?";
}

void ibx_config_print(void *file)
{
	FILE *f = file ? (FILE *)file : stdout;
	char env[96], num[32];

	for (ibx_config_section_t *s = cfg_sections; s; s = s->next) {
		ibx_config_section_load(s);
		fprintf(f, "# %s\n", s->module);
		for (unsigned i = 0; i < s->nfields; i++) {
			const ibx_config_field_t *e = &s->fields[i];

			snprintf(env, sizeof(env), "%s%s", s->prefix, e->name);
			fprintf(f, "%-24s = %-10s (default %s)\n    %s\n", env,
				field_text(s, e, num, sizeof(num)), e->def, e->help);
		}
	}
}

void ibx_config_print_markdown(FILE *f)
{
	fprintf(f, "| variable | module | default | meaning |\n|---|---|---|---|\n");
	for (ibx_config_section_t *s = cfg_sections; s; s = s->next) {
		for (unsigned i = 0; i < s->nfields; i++) {
			const ibx_config_field_t *e = &s->fields[i];

			fprintf(f, "| `%s%s` | %s | `%s` | ", s->prefix, e->name, s->module,
				e->def);
			for (const char *c = e->help; *c; c++) {
				if (*c == '|')
					fputc('\\', f);
				fputc(*c, f);
			}
			fprintf(f, " |\n");
		}
	}
}

/* ---- the core section ------------------------------------------------------ */

static int level_from_name(const char *s)
{
	static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
	for (size_t i = 0; i < IBX_ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i]))
			return (int)i;
	return -1;
}

static ibx_status_t core_apply(void *values)
{
	const ibx_core_config_t *cfg = values;
	int lvl = level_from_name(cfg->LOG);

	if (lvl < 0) {
		ibx_log_level_cur = IBX_LOG_WARN;
		ibx_error("IBX_LOG=\"%s\" is not one of error|warn|info|debug|trace", cfg->LOG);
		return IBX_ERR_INVALID_PARAM;
	}
	ibx_log_level_cur = lvl;
	return IBX_OK;
}

IBX_CONFIG_DEFINE(ibx_core, "core", "IBX_", ibx_core_config_t, IBX_CORE_CONFIG, core_apply)
