/* ibx-test: np=2,4 timeout=240 launchers=mpilite env="IBX_DT_SCHEME=bc-spup" nodes=1 */
/* dtype_schemes_bc_spup — dtype_schemes with every message forced to the
 * bc-spup scheme (segment pack and unpack, pipelined); a path that cannot do it
 * falls back to one it can. */
#include "dtype_schemes.c"
