/* ibx-test: np=1,2,3,4,8 timeout=120 env="IBX_MUTEX_ALGO=onesided" */
/* mutex_excl_onesided — mutex_excl under the onesided algorithm. */
#include "mutex_excl.c"
