/* ibx-test: np=2 timeout=120 launchers=mpilite env="IBX_DT_SCHEME=multi-w" nodes=1 */
/* dtype_gaps with every typed rendezvous forced to multi-w. */
#include "dtype_gaps.c"
