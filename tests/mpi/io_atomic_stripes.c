/* ibx-test: np=2,4,8 timeout=120 env="IBX_IO_LOCK_STRIPE=100 IBX_IO_LOCKS=7" */
/*
 * io_atomic_stripes — io_atomic with lock stripes of 100 bytes and 7
 * mutexes: an access's stripes wrap around the mutex set (taken as
 * 0..k then i..6, still in increasing order) or cover it all, and the
 * ranks' patterns overlap on many stripes at once.
 */
#include "io_atomic.c"
