/* ibx-test: np=2 timeout=120 launchers=mpilite env="IBX_DT_SCHEME=p-rrs" nodes=1 */
/* dtype_gaps with every typed rendezvous forced to p-rrs. */
#include "dtype_gaps.c"
