/* ibx-test: np=3,4 timeout=60 launchers=mpilite env="IBX_MUTEX_ALGO=onesided" nodes=1 */
/* mutex_death_waiter_onesided — mutex_death_waiter under the onesided algorithm. */
#include "mutex_death_waiter.c"
