/* ibx-test: np=2,4 timeout=240 launchers=mpilite env="IBX_DT_SCHEME=multi-w" nodes=1 */
/* dtype_schemes_multi_w — dtype_schemes with every message forced to the
 * multi-w scheme (one RDMA write per block pair, zero copy); a path that cannot do it
 * falls back to one it can. */
#include "dtype_schemes.c"
