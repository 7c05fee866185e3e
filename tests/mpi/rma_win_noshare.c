/* ibx-test: np=2,3 timeout=120 env="IBX_WIN_SHARE=n" */
/*
 * rma_win_noshare — rma_win_share with IBX_WIN_SHARE=n: windows over user
 * memory that stays where it is (node-local ranks reach it through system
 * calls), the same checks.
 */
#include "rma_win_share.c"
