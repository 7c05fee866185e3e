/* ibx-test: np=2,4 timeout=120 env="IBX_WIN_SHARE=n" */
/*
 * rma_acc_whole_noshare — rma_acc_whole with IBX_WIN_SHARE=n: the create
 * window stays private, so node-local ranks update it through the engine
 * (the kernel's single copy under the owner's read-modify-write lock), the
 * path a remote rank takes through the NIC.
 */
#include "rma_acc_whole.c"
