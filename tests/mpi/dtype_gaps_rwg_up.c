/* ibx-test: np=2 timeout=120 launchers=mpilite env="IBX_DT_SCHEME=rwg-up" nodes=1 */
/* dtype_gaps with every typed rendezvous forced to rwg-up. */
#include "dtype_gaps.c"
