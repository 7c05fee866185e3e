/*
 * bind.c — where mpilite-run's ranks run. Mapping places each rank on a
 * core; binding restricts the rank to that core, or to the package or NUMA
 * node around it, with sched_setaffinity in the child between fork and exec
 * (so that the program's first allocation already lands on its node).
 *
 * The machine is what the launcher may use (sched_getaffinity: a cgroup,
 * taskset or an enclosing job narrows it), grouped the way sysfs describes
 * it, without hwloc:
 *
 *   <sysfs>/cpu/cpuN/topology/{physical_package_id,die_id,core_id}
 *                          hardware threads -> cores -> packages
 *   <sysfs>/node/nodeK/cpulist
 *                          NUMA nodes
 *
 * (<sysfs> is MPILITE_RUN_SYSFS, /sys/devices/system.) A CPU whose topology
 * cannot be read is a core of its own in package 0; without node/ the
 * machine is one NUMA node. Cores are numbered as hwloc numbers them: by
 * package (in the order of its lowest CPU), then by their lowest CPU — so
 * where the kernel numbers CPUs alternately across packages, ranks 0 and 1
 * still share a package under --map-by core, as with Open MPI.
 *
 *   --map-by core|slot       rank i on core i (mod the cores)
 *   --map-by package|socket  round robin over the packages, each rank on
 *   --map-by numa            the next free core of its package / NUMA node
 *   --bind-to core           the rank's core: its hardware threads
 *   --bind-to package|socket every core of its package / NUMA node
 *   --bind-to numa
 *   --bind-to none           the launcher's CPUs, as any child gets
 *
 * The defaults are Open MPI's (PRRTE, Open MPI 5): map by core; bind each
 * rank to its core when the ranks do not outnumber the cores, and bind
 * nothing when they do (a rank pinned to a busy core could not move to one
 * that falls idle). Ranks bound one per core each see a single core, which
 * does not make the engine think the node is oversubscribed: it compares
 * the node-local ranks with the union of all their masks (core/context.c,
 * choose_spin_count), as for ranks pinned by bench/pin.sh.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#endif
#include "run_int.h"
#include "ibx_int.h"
#include "run_config.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

typedef struct bind_core {
	cpu_set_t cpus; /* its hardware threads that the launcher may use */
	int first;	/* the lowest of them */
	int package;	/* index in the order of the packages */
	int numa;	/* index in the order of the NUMA nodes */
	/* what sysfs says, to group hardware threads into cores */
	int pkg_id, die_id, core_id, node_id;
} bind_core_t;

struct run_binding {
	run_bind_to_t bind; /* never RUN_BIND_AUTO */
	bool auto_none;	    /* not bound because the ranks outnumber the cores */
	int np;
	int ncores, npackages, nnumas;
	bind_core_t *cores; /* [ncores], in hwloc's order */
	int *core_of;	    /* [np]: the core each rank is mapped to */
	cpu_set_t allowed;  /* the launcher's CPUs */
};

static const struct {
	const char *name;
	run_bind_to_t value;
} bind_names[] = {
    {"none", RUN_BIND_NONE},	  {"core", RUN_BIND_CORE}, {"package", RUN_BIND_PACKAGE},
    {"socket", RUN_BIND_PACKAGE}, {"numa", RUN_BIND_NUMA}, {"auto", RUN_BIND_AUTO},
};

static const struct {
	const char *name;
	run_map_by_t value;
} map_names[] = {
    {"core", RUN_MAP_CORE},	 {"slot", RUN_MAP_CORE}, {"package", RUN_MAP_PACKAGE},
    {"socket", RUN_MAP_PACKAGE}, {"numa", RUN_MAP_NUMA},
};

/* Directives are case-insensitive, as Open MPI's are. */
int run_bind_to_parse(const char *s, const char *opt, run_bind_to_t *out)
{
	for (size_t i = 0; i < IBX_ARRAY_SIZE(bind_names); i++) {
		if (!strcasecmp(s, bind_names[i].name)) {
			*out = bind_names[i].value;
			return 0;
		}
	}
	run_msg("%s: '%s' is not one of core, package (socket), numa, none, auto", opt, s);
	return -1;
}

int run_map_by_parse(const char *s, const char *opt, run_map_by_t *out)
{
	for (size_t i = 0; i < IBX_ARRAY_SIZE(map_names); i++) {
		if (!strcasecmp(s, map_names[i].name)) {
			*out = map_names[i].value;
			return 0;
		}
	}
	run_msg("%s: '%s' is not one of core, slot, package (socket), numa", opt, s);
	return -1;
}

/* ---- the machine ------------------------------------------------------------ */

/* The integer in @dir/@name; false when it cannot be read. */
static bool read_int(const char *dir, const char *name, int *out)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok;
}

/* "0-3,8,10-11" (sysfs cpulist format) into @set; false if malformed. */
static bool parse_cpulist(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s && *s != '\n') {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;

		if (end == s || lo < 0)
			return false;
		s = end;
		if (*s == '-') {
			hi = strtol(s + 1, &end, 10);
			if (end == s + 1 || hi < lo)
				return false;
			s = end;
		}
		for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return false;
	}
	return true;
}

/* node_of[cpu] = the NUMA node id that <sysfs>/node/nodeK/cpulist gives it;
 * -1 for a CPU in none. */
static void read_numa_nodes(const char *sysfs, int *node_of)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	for (int c = 0; c < CPU_SETSIZE; c++)
		node_of[c] = -1;
	snprintf(path, sizeof(path), "%s/node", sysfs);
	d = opendir(path);
	if (!d)
		return; /* no NUMA support in the kernel: one node */
	while ((e = readdir(d))) {
		char list[8192];
		cpu_set_t set;
		FILE *f;
		int id;

		if (strncmp(e->d_name, "node", 4) || !isdigit((unsigned char)e->d_name[4]))
			continue;
		id = atoi(e->d_name + 4);
		snprintf(path, sizeof(path), "%s/node/%s/cpulist", sysfs, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(list, sizeof(list), f) && parse_cpulist(list, &set)) {
			for (int c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set))
					node_of[c] = id;
		}
		fclose(f);
	}
	closedir(d);
}

static int core_cmp(const void *a, const void *b)
{
	const bind_core_t *x = a, *y = b;

	if (x->package != y->package)
		return x->package < y->package ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Groups the launcher's CPUs into cores, packages and NUMA nodes. The CPUs
 * are visited in increasing order, so a package (a node) gets its index
 * when its lowest CPU is seen: the indices follow the lowest CPUs.
 */
static int read_topology(run_binding_t *b)
{
	const char *sysfs = mpil_run_config()->SYSFS;
	int *node_of, *pkg_ids, *node_ids;

	node_of = malloc(CPU_SETSIZE * sizeof(*node_of));
	pkg_ids = malloc(CPU_SETSIZE * sizeof(*pkg_ids));
	node_ids = malloc(CPU_SETSIZE * sizeof(*node_ids));
	b->cores = calloc(CPU_SETSIZE, sizeof(*b->cores));
	if (!node_of || !pkg_ids || !node_ids || !b->cores) {
		free(node_of);
		free(pkg_ids);
		free(node_ids);
		run_msg("out of memory reading the CPU topology");
		return -1;
	}
	read_numa_nodes(sysfs, node_of);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		char dir[PATH_MAX];
		int pkg, die = 0, core, k;
		bind_core_t *c = NULL;

		if (!CPU_ISSET(cpu, &b->allowed))
			continue;
		snprintf(dir, sizeof(dir), "%s/cpu/cpu%d/topology", sysfs, cpu);
		if (!read_int(dir, "physical_package_id", &pkg) ||
		    !read_int(dir, "core_id", &core)) {
			pkg = 0; /* unknown: a core of its own */
			core = -1 - cpu;
		}
		if (pkg < 0) /* -1 where the firmware does not say */
			pkg = 0;
		(void)read_int(dir, "die_id", &die);
		for (k = 0; k < b->ncores; k++) {
			c = &b->cores[k];
			if (c->pkg_id == pkg && c->die_id == die && c->core_id == core)
				break;
		}
		if (k == b->ncores) {
			c = &b->cores[b->ncores++];
			CPU_ZERO(&c->cpus);
			c->first = cpu;
			c->pkg_id = pkg;
			c->die_id = die;
			c->core_id = core;
			c->node_id = node_of[cpu];
			for (c->package = 0; c->package < b->npackages; c->package++)
				if (pkg_ids[c->package] == pkg)
					break;
			if (c->package == b->npackages)
				pkg_ids[b->npackages++] = pkg;
			for (c->numa = 0; c->numa < b->nnumas; c->numa++)
				if (node_ids[c->numa] == c->node_id)
					break;
			if (c->numa == b->nnumas)
				node_ids[b->nnumas++] = c->node_id;
		}
		CPU_SET(cpu, &c->cpus);
	}
	qsort(b->cores, (size_t)b->ncores, sizeof(*b->cores), core_cmp);
	free(node_of);
	free(pkg_ids);
	free(node_ids);
	return 0;
}

/* ---- mapping ------------------------------------------------------------------ */

static int core_domain(const run_binding_t *b, int k, run_map_by_t map)
{
	return map == RUN_MAP_NUMA ? b->cores[k].numa : b->cores[k].package;
}

/* Round robin over the packages (NUMA nodes), the next free core of each;
 * a domain whose cores are all taken passes its turn to the next; when
 * every core is taken, the cores are dealt again. */
static void map_round_robin(run_binding_t *b, run_map_by_t map, bool *used)
{
	int ndom = map == RUN_MAP_NUMA ? b->nnumas : b->npackages, nused = 0;

	for (int r = 0; r < b->np; r++) {
		int k = -1;

		if (nused == b->ncores) {
			memset(used, 0, (size_t)b->ncores * sizeof(*used));
			nused = 0;
		}
		for (int step = 0; step < ndom && k < 0; step++) {
			int dom = (r + step) % ndom;

			for (int i = 0; i < b->ncores && k < 0; i++)
				if (!used[i] && core_domain(b, i, map) == dom)
					k = i;
		}
		used[k] = true;
		nused++;
		b->core_of[r] = k;
	}
}

run_binding_t *run_binding_plan(const run_opts_t *opts)
{
	run_binding_t *b = calloc(1, sizeof(*b));
	bool *used = NULL;

	if (!b)
		goto err_nomem;
	b->np = opts->np;
	b->bind = opts->bind_to;
	if (sched_getaffinity(0, sizeof(b->allowed), &b->allowed) < 0) {
		/* more CPUs than a cpu_set_t holds: leave the ranks alone */
		if (b->bind != RUN_BIND_AUTO && b->bind != RUN_BIND_NONE)
			run_msg("sched_getaffinity: %s; the ranks are not bound", strerror(errno));
		b->bind = RUN_BIND_NONE;
		return b;
	}
	if (read_topology(b) < 0)
		goto err_free;
	if (b->ncores == 0) {
		b->bind = RUN_BIND_NONE;
		return b;
	}
	if (b->bind == RUN_BIND_AUTO) {
		b->auto_none = b->np > b->ncores;
		b->bind = b->auto_none ? RUN_BIND_NONE : RUN_BIND_CORE;
	} else if (b->bind == RUN_BIND_CORE && b->np > b->ncores) {
		run_msg("%d ranks on %d cores: --bind-to core puts more than one rank on a core",
			b->np, b->ncores);
	}
	b->core_of = malloc((size_t)b->np * sizeof(*b->core_of));
	used = calloc((size_t)b->ncores, sizeof(*used));
	if (!b->core_of || !used)
		goto err_nomem;
	if (opts->map_by == RUN_MAP_CORE)
		for (int r = 0; r < b->np; r++)
			b->core_of[r] = r % b->ncores;
	else
		map_round_robin(b, opts->map_by, used);
	free(used);
	ibx_debug("binding: %d ranks, %d cores in %d package(s) and %d NUMA node(s)", b->np,
		  b->ncores, b->npackages, b->nnumas);
	return b;

err_nomem:
	run_msg("out of memory planning the binding");
err_free:
	free(used);
	run_binding_free(b);
	return NULL;
}

void run_binding_free(run_binding_t *b)
{
	if (!b)
		return;
	free(b->cores);
	free(b->core_of);
	free(b);
}

/* ---- binding ------------------------------------------------------------------ */

/* The CPUs rank @rank is bound to; false when it is not bound. Computes
 * only (no allocation, no locks): the child calls it after fork. */
static bool rank_cpus(const run_binding_t *b, int rank, cpu_set_t *set)
{
	const bind_core_t *mine;

	if (b->bind == RUN_BIND_NONE)
		return false;
	mine = &b->cores[b->core_of[rank]];
	CPU_ZERO(set);
	for (int k = 0; k < b->ncores; k++) {
		const bind_core_t *c = &b->cores[k];

		if (c == mine || (b->bind == RUN_BIND_PACKAGE && c->package == mine->package) ||
		    (b->bind == RUN_BIND_NUMA && c->numa == mine->numa))
			CPU_OR(set, set, &c->cpus);
	}
	return true;
}

int run_binding_apply(const run_binding_t *b, int rank)
{
	cpu_set_t set;

	if (!b || !rank_cpus(b, rank, &set))
		return 0;
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? errno : 0;
}

/* "0-3,8" */
static void format_cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && n < len; c++) {
		int hi = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set))
			hi++;
		if (hi == c)
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", c);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, hi);
		c = hi;
	}
}

/* --report-bindings: one line per rank on the launcher's stderr. */
void run_binding_report(const run_binding_t *b)
{
	char list[4096];

	for (int r = 0; r < b->np; r++) {
		const bind_core_t *c;
		cpu_set_t set;

		if (!rank_cpus(b, r, &set)) {
			format_cpulist(&b->allowed, list, sizeof(list));
			if (b->auto_none)
				run_msg("rank %d not bound (%d ranks on %d cores): CPUs %s", r,
					b->np, b->ncores, list);
			else
				run_msg("rank %d not bound: CPUs %s", r, list);
			continue;
		}
		c = &b->cores[b->core_of[r]];
		format_cpulist(&set, list, sizeof(list));
		switch (b->bind) {
		case RUN_BIND_PACKAGE:
			run_msg("rank %d bound to package %d: CPUs %s", r, c->package, list);
			break;
		case RUN_BIND_NUMA:
			run_msg("rank %d bound to NUMA node %d: CPUs %s", r, c->numa, list);
			break;
		default:
			run_msg("rank %d bound to core %d (package %d, NUMA node %d): CPUs %s", r,
				b->core_of[r], c->package, c->numa, list);
			break;
		}
	}
}
