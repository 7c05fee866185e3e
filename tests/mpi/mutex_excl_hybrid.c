/* ibx-test: np=1,2,3,4,8 timeout=120 env="IBX_MUTEX_ALGO=hybrid" */
/* mutex_excl_hybrid — mutex_excl under the hybrid algorithm. */
#include "mutex_excl.c"
