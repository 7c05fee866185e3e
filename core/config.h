/*
 * config.h — configuration sections. Every tunable of ibx is an environment
 * variable declared once, in the table of the module it belongs to; each
 * table is registered with one registry, which `ibtest info` (through
 * ibx_config_print) prints as one list, and README's table is made from.
 *
 * A module's table is an X-macro in its own header, one row per variable:
 *
 *     #define IBX_SHM_CONFIG(X) \
 *         X(SHM_RING_SLOTS, INT, "1024", "help text") \
 *         ...
 *     typedef struct ibx_shm_config {
 *         IBX_SHM_CONFIG(IBX_CONFIG_FIELD)
 *     } ibx_shm_config_t;
 *     IBX_CONFIG_DECLARE(ibx_shm, ibx_shm_config_t);
 *
 * row = (field, type, default, help): the variable is <prefix><field>
 * ("IBX_SHM_RING_SLOTS"); type STR, INT (int64; k/m/g suffixes, 0x hex) or
 * BOOL (y/n/1/0/on/off/yes/no/true/false). One .c file of the module defines
 * the section (at most one section per .c file):
 *
 *     IBX_CONFIG_DEFINE(ibx_shm, "core/shm_lf", "IBX_", ibx_shm_config_t,
 *                       IBX_SHM_CONFIG, NULL)
 *
 * which gives ibx_shm_config_section, ibx_shm_config() (parsed from the
 * environment on first use; never NULL) and a constructor that registers the
 * section. A malformed value is reported and the default used instead.
 */
#ifndef IBX_CONFIG_H
#define IBX_CONFIG_H

#include "ibx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ibx_config_type {
	IBX_CONFIG_T_STR,
	IBX_CONFIG_T_INT,
	IBX_CONFIG_T_BOOL
} ibx_config_type_t;

typedef struct ibx_config_field {
	const char *name; /* without the section's prefix */
	ibx_config_type_t type;
	const char *def;
	const char *help;
	size_t offset; /* in the section's struct */
} ibx_config_field_t;

typedef struct ibx_config_section {
	const char *module; /* where the variables act: "core/qp", "mpi-lite" */
	const char *prefix; /* "IBX_" */
	const ibx_config_field_t *fields;
	unsigned nfields;
	void *values;	    /* the module's struct */
	uint64_t *set_mask; /* bit i: field i came from the environment */
	/* optional: checks values beyond their type and applies them (core:
	 * the log level); IBX_ERR_INVALID_PARAM after logging what is wrong */
	ibx_status_t (*apply)(void *values);
	int loaded;			 /* parsed (atomic; ibx_config_section_load) */
	struct ibx_config_section *next; /* registry, ordered by module */
} ibx_config_section_t;

/* Parses the section's variables now (first use); later calls do nothing. */
void ibx_config_section_load(ibx_config_section_t *s);
/* Adds @s to the registry (the section constructors call it). */
void ibx_config_register(ibx_config_section_t *s);
/* True when the variable behind @field (a pointer into the section's values)
 * was set in the environment, not defaulted. */
bool ibx_config_is_set(ibx_config_section_t *s, const void *field);
/* Re-reads every registered section from the environment (tests that change
 * variables). IBX_ERR_INVALID_PARAM, logged, when a value is malformed. */
ibx_status_t ibx_config_reload(void);
/* Parses "16k", "4m", "1g", decimal or 0x hex. */
ibx_status_t ibx_config_parse_size(const char *s, int64_t *value_p);
/* Every registered variable as one Markdown table (README's). */
void ibx_config_print_markdown(FILE *f);

#define IBX_CONFIG_FIELD_STR(name)  const char *name;
#define IBX_CONFIG_FIELD_INT(name)  int64_t name;
#define IBX_CONFIG_FIELD_BOOL(name) bool name;
/* A table row as a struct member. */
#define IBX_CONFIG_FIELD(name, kind, def, help) IBX_CONFIG_FIELD_##kind(name)

#define IBX_CONFIG_DECLARE(pfx, type_)                                                             \
	extern ibx_config_section_t pfx##_config_section;                                          \
	const type_ *pfx##_config(void)

/* A table row as a field descriptor (of the struct IBX_CONFIG_DEFINE names). */
#define IBX_CONFIG_ROW_(name, kind, def, help)                                                     \
	{#name, IBX_CONFIG_T_##kind, def, help, offsetof(ibx_config_this_t, name)},

#define IBX_CONFIG_NROWS_(a) (sizeof(a) / sizeof((a)[0]))

/* Defines the section @pfx (see the top of this file): table @table_ (the
 * X-macro) describes struct @type_; @apply_ is the apply hook or NULL. */
#define IBX_CONFIG_DEFINE(pfx, module_, prefix_, type_, table_, apply_)                            \
	typedef type_ ibx_config_this_t;                                                           \
	static const ibx_config_field_t pfx##_config_fields[] = {table_(IBX_CONFIG_ROW_)};         \
	_Static_assert(IBX_CONFIG_NROWS_(pfx##_config_fields) <= 64,                               \
		       "at most 64 rows per section");                                             \
	static type_ pfx##_config_values;                                                          \
	static uint64_t pfx##_config_set;                                                          \
	ibx_config_section_t pfx##_config_section = {module_,                                      \
						     prefix_,                                      \
						     pfx##_config_fields,                          \
						     IBX_CONFIG_NROWS_(pfx##_config_fields),       \
						     &pfx##_config_values,                         \
						     &pfx##_config_set,                            \
						     apply_,                                       \
						     0,                                            \
						     NULL};                                        \
	const type_ *pfx##_config(void)                                                            \
	{                                                                                          \
		ibx_config_section_load(&pfx##_config_section);                                    \
		return &pfx##_config_values;                                                       \
	}                                                                                          \
	__attribute__((constructor)) static void pfx##_config_register(void)                       \
	{                                                                                          \
		ibx_config_register(&pfx##_config_section);                                        \
	}

#endif /* IBX_CONFIG_H */
