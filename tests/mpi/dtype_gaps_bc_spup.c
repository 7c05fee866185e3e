/* ibx-test: np=2 timeout=120 launchers=mpilite env="IBX_DT_SCHEME=bc-spup" nodes=1 */
/* dtype_gaps with every typed rendezvous forced to bc-spup. */
#include "dtype_gaps.c"
