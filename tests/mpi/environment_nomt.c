/* ibx-test: np=1,2,3,4 timeout=60 env="IBX_THREAD_MULTIPLE=n" nodes=1 */
/* environment_nomt — environment with MPI_THREAD_MULTIPLE refused: asked
 * for it, MPI_Init_thread answers MPI_THREAD_SERIALIZED. */
#include "environment.c"
