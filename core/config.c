/*
 * config.c — the IBX_* configuration: parsed once from the environment
 * against the table in config_table.h, printed by `ibtest info`.
 */
#include "ibx_int.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <strings.h>

enum cfg_type { CFG_STR, CFG_INT, CFG_BOOL };

typedef struct cfg_entry {
	const char *name;
	enum cfg_type type;
	const char *def;
	const char *help;
	size_t offset;
} cfg_entry_t;

static const cfg_entry_t cfg_table[] = {
#define IBX_CONFIG(name, type, def, help)                                                          \
	{#name, CFG_##type, def, help, offsetof(ibx_config_t, name)},
#include "config_table.h"
#undef IBX_CONFIG
};

static ibx_config_t cfg_values;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

ibx_status_t ibx_config_parse_size(const char *s, int64_t *value_p)
{
	char *end;
	long long v;
	int64_t mult = 1;

	if (!s || !*s)
		return IBX_ERR_INVALID_PARAM;
	errno = 0;
	v = strtoll(s, &end, 0);
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

static ibx_status_t set_entry(ibx_config_t *cfg, const cfg_entry_t *e, const char *s)
{
	char *field = (char *)cfg + e->offset;

	switch (e->type) {
	case CFG_STR: *(const char **)field = s; return IBX_OK;
	case CFG_INT: return ibx_config_parse_size(s, (int64_t *)field);
	case CFG_BOOL: return parse_bool(s, (bool *)field);
	}
	return IBX_ERR_INVALID_PARAM;
}

static int level_from_name(const char *s)
{
	static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
	for (size_t i = 0; i < IBX_ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i]))
			return (int)i;
	return -1;
}

ibx_status_t ibx_config_reload(void)
{
	ibx_config_t cfg;
	ibx_status_t ret = IBX_OK;
	char env[64];

	for (size_t i = 0; i < IBX_ARRAY_SIZE(cfg_table); i++) {
		const cfg_entry_t *e = &cfg_table[i];
		const char *v;

		snprintf(env, sizeof(env), "IBX_%s", e->name);
		v = getenv(env);
		if (v && set_entry(&cfg, e, v) == IBX_OK)
			continue;
		if (v) {
			ibx_error("%s=\"%s\" is not a valid value (%s); using the default \"%s\"",
				  env, v, e->help, e->def);
			ret = IBX_ERR_INVALID_PARAM;
		}
		set_entry(&cfg, e, e->def);
	}
	int lvl = level_from_name(cfg.LOG);
	if (lvl < 0) {
		ibx_error("IBX_LOG=\"%s\" is not one of error|warn|info|debug|trace", cfg.LOG);
		ret = IBX_ERR_INVALID_PARAM;
		lvl = IBX_LOG_WARN;
	}
	ibx_log_level_cur = lvl;
	cfg_values = cfg;
	return ret;
}

static void config_load_once(void)
{
	(void)ibx_config_reload();
}

const ibx_config_t *ibx_config(void)
{
	pthread_once(&cfg_once, config_load_once);
	return &cfg_values;
}

void ibx_config_print(void *file)
{
	FILE *f = file ? (FILE *)file : stdout;
	const ibx_config_t *cfg = ibx_config();
	char env[64];

	for (size_t i = 0; i < IBX_ARRAY_SIZE(cfg_table); i++) {
		const cfg_entry_t *e = &cfg_table[i];
		const char *field = (const char *)cfg + e->offset;

		snprintf(env, sizeof(env), "IBX_%s", e->name);
		switch (e->type) {
		case CFG_STR: fprintf(f, "%-22s = %-10s", env, *(const char *const *)field); break;
		case CFG_INT:
			fprintf(f, "%-22s = %-10lld", env, (long long)*(const int64_t *)field);
			break;
		case CFG_BOOL:
			fprintf(f, "%-22s = %-10s", env, *(const bool *)field ? "y" : "n");
			break;
		}
		fprintf(f, " (default %s)\n    %s\n", e->def, e->help);
	}
}
