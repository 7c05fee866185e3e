/*
 * config.c — mpi-lite's configuration section (its rows: mpil_config.h).
 * A file of its own so that `ibtest info` can link the section without the
 * rest of the library.
 */
#include "mpil_int.h"

IBX_CONFIG_DEFINE(mpil, "mpi-lite", "IBX_", mpil_config_t, MPIL_CONFIG, NULL)
