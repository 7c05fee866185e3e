/* ibx-test: np=3,4 timeout=60 launchers=mpilite env="IBX_MUTEX_ALGO=onesided" nodes=1 */
/* mutex_death_onesided — mutex_death under the onesided algorithm. */
#include "mutex_death.c"
