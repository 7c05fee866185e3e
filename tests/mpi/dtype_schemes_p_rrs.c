/* ibx-test: np=2,4 timeout=240 launchers=mpilite env="IBX_DT_SCHEME=p-rrs" nodes=1 */
/* dtype_schemes_p_rrs — dtype_schemes with every message forced to the
 * p-rrs scheme (pack, RDMA read scatter); a path that cannot do it
 * falls back to one it can. */
#include "dtype_schemes.c"
