/* ibx-test: np=2,4 timeout=240 launchers=mpilite env="IBX_DT_SCHEME=rwg-up" nodes=1 */
/* dtype_schemes_rwg_up — dtype_schemes with every message forced to the
 * rwg-up scheme (RDMA write gather, segment unpack); a path that cannot do it
 * falls back to one it can. */
#include "dtype_schemes.c"
