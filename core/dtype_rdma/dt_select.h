/*
 * dt_select.h — the scheme selector of typed messages (dt_select.c).
 */
#ifndef IBX_DT_SELECT_H
#define IBX_DT_SELECT_H

#include "dt_xfer.h"

/* The selector's thresholds (bytes of average block length; see
 * dt_select.c), per process. */
typedef struct ibx_dt_model {
	int64_t scatter_min; /* p-rrs from a contiguous sender */
	int64_t multiw_min;  /* multi-w, both sides */
	int64_t gather_min;  /* rwg-up rather than bc-spup */
	int64_t push_min;    /* the sender pushes from its blocks (else packs first) */
	char source[640];    /* "defaults", "environment" or the calibration file */
} ibx_dt_model_t;

/* At the sender, on a path whose scattered sends are pushed (verbs):
 * whether a send of this type pushes from its blocks (the receiver then
 * chooses multi-w, rwg-up or bc-spup) or is packed first (generic, p-rrs). */
bool ibx_dt_select_push(const ibx_dt_t *dt);

/* Loads the thresholds: each from its IBX_DT_* variable when set, else from
 * the device's calibration file (ibx_dt_calib_path) when there is one, else
 * the defaults. */
ibx_status_t ibx_dt_select_init(ibx_ctx_t *ctx);
void ibx_dt_model_get(ibx_dt_model_t *m);
/* The calibration file of @device: $IBX_DT_CALIB_DIR, else
 * $XDG_CACHE_HOME/ibx, else $HOME/.cache/ibx, then "dtype-<device>.conf".
 * IBX_ERR_NOT_FOUND when no directory can be named. */
ibx_status_t ibx_dt_calib_path(const char *device, char *buf, size_t len);
/* Writes @m as @device's calibration (creating the directory). */
ibx_status_t ibx_dt_calib_save(const char *device, const ibx_dt_model_t *m);

/* The receive scheme for a rendezvous of @len bytes into (dt, count):
 * @forced unless AUTO or not in @can (the schemes the path can do for this
 * message), else the cost model's choice among @fast; *why_p says why in
 * a few words (for IBX_LOG=info). */
ibx_dt_scheme_t ibx_dt_select_recv(ibx_ctx_t *ctx, const ibx_dt_t *dt, int64_t count, size_t len,
				   bool sender_contig, uint32_t sender_avg, unsigned can,
				   unsigned fast, ibx_dt_scheme_t forced, const char **why_p);

#endif /* IBX_DT_SELECT_H */
