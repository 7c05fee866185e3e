/* ibx-test: np=3,4 timeout=60 launchers=mpilite env="IBX_MUTEX_ALGO=hybrid" nodes=1 */
/* mutex_death_hybrid — mutex_death under the hybrid algorithm. */
#include "mutex_death.c"
