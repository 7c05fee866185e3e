/*
 * run_config.c — mpilite-run's configuration section (its rows:
 * run_config.h). A file of its own so that `ibtest info` can link it too.
 */
#include "ibx_int.h"
#include "run_config.h"

IBX_CONFIG_DEFINE(mpil_run, "mpilite-run", "MPILITE_RUN_", mpil_run_config_t, MPIL_RUN_CONFIG, NULL)
