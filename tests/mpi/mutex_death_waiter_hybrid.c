/* ibx-test: np=3,4 timeout=60 launchers=mpilite env="IBX_MUTEX_ALGO=hybrid" nodes=1 */
/* mutex_death_waiter_hybrid — mutex_death_waiter under the hybrid algorithm. */
#include "mutex_death_waiter.c"
