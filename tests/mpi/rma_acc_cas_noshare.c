/* ibx-test: np=2,3,4 timeout=120 env="IBX_WIN_SHARE=n" */
/*
 * rma_acc_cas_noshare — rma_acc_cas with IBX_WIN_SHARE=n: the create
 * window stays private, so node-local ranks update it with locked
 * read-modify-writes through the kernel (CMA) while its owner uses the
 * same lock; the spin locks and their counters must hold all the same.
 */
#include "rma_acc_cas.c"
