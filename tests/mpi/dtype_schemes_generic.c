/* ibx-test: np=2,4 timeout=240 launchers=mpilite env="IBX_DT_SCHEME=generic" nodes=1 */
/* dtype_schemes_generic — dtype_schemes with every message forced to the
 * generic scheme (pack, send, unpack); a path that cannot do it
 * falls back to one it can. */
#include "dtype_schemes.c"
