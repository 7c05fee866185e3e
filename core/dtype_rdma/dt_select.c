/*
 * dt_select.c — which scheme moves a typed rendezvous (the choice [Wu03]
 * §6 leaves open), made by the receiver when the message is matched: it
 * knows its own layout, and from the RTS whether the sender's bytes are
 * contiguous (a contiguous type, or packed) or, if not, the average block
 * of the sender's type.
 *
 *   forced (IBX_DT_SCHEME) and possible here            -> that scheme
 *   sender contiguous:
 *     receive blocks average >= DT_SCATTER_MIN_BLOCK     -> p-rrs (read or
 *       copy straight into the blocks: no unpack pass; below that size a
 *       block costs more as a scatter entry than as a copy)
 *     segment pack/unpack possible (shared memory)      -> bc-spup
 *     otherwise                                         -> generic
 *   sender's blocks in place (verbs: the sender pushes only when its
 *   blocks average at least DT_PUSH_MIN_BLOCK, else it packs first and is
 *   contiguous, above):
 *     both sides' blocks average >= DT_MULTIW_MIN_BLOCK  -> multi-w (zero
 *       copy: one write per block pair; [Wu03] §6: "several KBytes")
 *     sender's blocks average >= DT_GATHER_MIN_BLOCK     -> rwg-up (gather
 *       writes into segments, unpacked as they land)
 *     otherwise                                         -> bc-spup (both
 *       sides copy, pipelined segment by segment)
 *
 * Only the schemes the path marks fast for this message are chosen
 * unforced (shared memory: the single copy only where it beats the pipe).
 * The thresholds are configuration, with defaults measured by
 * `ibtest dtype` on both paths (docs/datatypes.md).
 */
#include "dt_select.h"

#include "dt_config.h"
#include "config.h"
#include "dtype_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#define NKEYS 4

static ibx_dt_model_t model;
static int model_loaded;

ibx_status_t ibx_dt_calib_path(const char *device, char *buf, size_t len)
{
	const char *dir = ibx_dt_config()->DT_CALIB_DIR, *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	int n;

	if (!device || !buf || !*device || strchr(device, '/'))
		return IBX_ERR_INVALID_PARAM;
	if (dir && *dir)
		n = snprintf(buf, len, "%s/dtype-%s.conf", dir, device);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/ibx/dtype-%s.conf", xdg, device);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/ibx/dtype-%s.conf", home, device);
	else
		return IBX_ERR_NOT_FOUND;
	return n > 0 && (size_t)n < len ? IBX_OK : IBX_ERR_OVERFLOW;
}

/* Reads the three thresholds of a calibration file; false if it has
 * none that parse (a hand-edited file is checked like the environment). */
static bool calib_read(const char *path, int64_t v[NKEYS])
{
	static const char *const keys[NKEYS] = {"DT_SCATTER_MIN_BLOCK", "DT_MULTIW_MIN_BLOCK",
						"DT_GATHER_MIN_BLOCK", "DT_PUSH_MIN_BLOCK"};
	FILE *f = fopen(path, "r");
	char line[256];
	bool any = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		int64_t x;

		if (line[0] == '#' || !eq)
			continue;
		*eq = 0;
		eq[strcspn(eq + 1, "\r\n") + 1] = 0;
		for (int k = 0; k < NKEYS; k++) {
			if (strcmp(line, keys[k]) || ibx_config_parse_size(eq + 1, &x) != IBX_OK ||
			    x < 0) {
				continue;
			}
			v[k] = x;
			any = true;
		}
	}
	fclose(f);
	return any;
}

ibx_status_t ibx_dt_select_init(ibx_ctx_t *ctx)
{
	const ibx_dt_config_t *cfg = ibx_dt_config();
	ibx_config_section_t *sec = &ibx_dt_config_section;
	const char *dev = ibx_ctx_device(ctx);
	int64_t v[NKEYS] = {cfg->DT_SCATTER_MIN_BLOCK, cfg->DT_MULTIW_MIN_BLOCK,
			    cfg->DT_GATHER_MIN_BLOCK, cfg->DT_PUSH_MIN_BLOCK};
	bool set[NKEYS] = {ibx_config_is_set(sec, &cfg->DT_SCATTER_MIN_BLOCK),
			   ibx_config_is_set(sec, &cfg->DT_MULTIW_MIN_BLOCK),
			   ibx_config_is_set(sec, &cfg->DT_GATHER_MIN_BLOCK),
			   ibx_config_is_set(sec, &cfg->DT_PUSH_MIN_BLOCK)};
	char path[512];
	int64_t f[NKEYS] = {v[0], v[1], v[2], v[3]};

	snprintf(model.source, sizeof(model.source), "defaults");
	if (dev && ibx_dt_calib_path(dev, path, sizeof(path)) == IBX_OK && calib_read(path, f)) {
		for (int k = 0; k < NKEYS; k++)
			if (!set[k])
				v[k] = f[k];
		snprintf(model.source, sizeof(model.source), "%s", path);
	}
	if (set[0] || set[1] || set[2] || set[3])
		snprintf(model.source + strlen(model.source),
			 sizeof(model.source) - strlen(model.source), " and environment");
	model.scatter_min = v[0];
	model.multiw_min = v[1];
	model.gather_min = v[2];
	model.push_min = v[3];
	model_loaded = 1;
	ibx_info("datatype selector: push from %lld B, p-rrs from %lld B, multi-w from %lld B, "
		 "rwg-up from %lld B average blocks (%s)",
		 (long long)v[3], (long long)v[0], (long long)v[1], (long long)v[2], model.source);
	return IBX_OK;
}

void ibx_dt_model_get(ibx_dt_model_t *m)
{
	if (!model_loaded)
		ibx_dt_select_init(NULL);
	*m = model;
}

ibx_status_t ibx_dt_calib_save(const char *device, const ibx_dt_model_t *m)
{
	char path[512], *slash;
	FILE *f;
	ibx_status_t st = ibx_dt_calib_path(device, path, sizeof(path));

	if (st != IBX_OK)
		return st;
	/* mkdir -p of the directory */
	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*slash = '/';
			return IBX_ERR_IO;
		}
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return IBX_ERR_IO;
	fprintf(f, "# ibx datatype selector thresholds for %s (ibtest dtype --calibrate)\n",
		device);
	fprintf(f,
		"DT_SCATTER_MIN_BLOCK=%lld\nDT_MULTIW_MIN_BLOCK=%lld\nDT_GATHER_MIN_BLOCK=%lld\n",
		(long long)m->scatter_min, (long long)m->multiw_min, (long long)m->gather_min);
	return fclose(f) == 0 ? IBX_OK : IBX_ERR_IO;
}

bool ibx_dt_select_push(const ibx_dt_t *dt)
{
	ibx_dt_stats_t s;

	if (!model_loaded)
		ibx_dt_select_init(NULL);
	return ibx_dt_stats(dt, &s) == IBX_OK && s.avg_block >= (double)model.push_min;
}

static bool can(unsigned set, ibx_dt_scheme_t s)
{
	return set & IBX_DT_CAN(s);
}

static ibx_dt_scheme_t select_auto(const ibx_dt_t *dt, bool sender_contig, uint32_t sender_avg,
				   unsigned set, const char **why_p)
{
	ibx_dt_stats_t s;
	double avg = ibx_dt_stats(dt, &s) == IBX_OK ? s.avg_block : 0;

	if (!model_loaded)
		ibx_dt_select_init(NULL);

	if (sender_contig) {
		if (can(set, IBX_DT_SCHEME_P_RRS) && avg >= (double)model.scatter_min) {
			*why_p = "contiguous sender, receive blocks large enough to scatter into";
			return IBX_DT_SCHEME_P_RRS;
		}
		if (can(set, IBX_DT_SCHEME_BC_SPUP)) {
			*why_p = "segments unpacked as they arrive";
			return IBX_DT_SCHEME_BC_SPUP;
		}
		*why_p = "receive blocks too small to scatter into";
		return IBX_DT_SCHEME_GENERIC;
	}
	if (can(set, IBX_DT_SCHEME_MULTI_W) && avg >= (double)model.multiw_min &&
	    (int64_t)sender_avg >= model.multiw_min) {
		*why_p = "large blocks on both sides: one write per block pair";
		return IBX_DT_SCHEME_MULTI_W;
	}
	if (can(set, IBX_DT_SCHEME_RWG_UP) && (int64_t)sender_avg >= model.gather_min) {
		*why_p = "send blocks large enough to gather from";
		return IBX_DT_SCHEME_RWG_UP;
	}
	if (can(set, IBX_DT_SCHEME_BC_SPUP)) {
		*why_p = "small blocks: segments packed and unpacked in flight";
		return IBX_DT_SCHEME_BC_SPUP;
	}
	*why_p = "reference";
	return IBX_DT_SCHEME_GENERIC;
}

ibx_dt_scheme_t ibx_dt_select_recv(ibx_ctx_t *ctx, const ibx_dt_t *dt, int64_t count, size_t len,
				   bool sender_contig, uint32_t sender_avg, unsigned can,
				   unsigned fast, ibx_dt_scheme_t forced, const char **why_p)
{
	ibx_dt_scheme_t s;

	(void)ctx;
	(void)count;
	(void)len;
	/* every path can land in a buffer of the receive's own */
	can |= IBX_DT_CAN(IBX_DT_SCHEME_GENERIC);
	fast |= IBX_DT_CAN(IBX_DT_SCHEME_GENERIC);
	if (forced != IBX_DT_SCHEME_AUTO && (can & IBX_DT_CAN(forced))) {
		*why_p = "IBX_DT_SCHEME";
		return forced;
	}
	s = select_auto(dt, sender_contig, sender_avg, can & fast, why_p);
	if (forced != IBX_DT_SCHEME_AUTO)
		*why_p = "IBX_DT_SCHEME names a scheme this path cannot do here";
	return s;
}
