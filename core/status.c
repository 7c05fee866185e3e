/* status.c — human-readable names of ibx_status_t. */
#include "ibx_int.h"

const char *ibx_status_str(ibx_status_t status)
{
	switch (status) {
	case IBX_OK: return "success";
	case IBX_INPROGRESS: return "in progress";
	case IBX_ERR_INVALID_PARAM: return "invalid parameter";
	case IBX_ERR_NO_MEMORY: return "out of memory";
	case IBX_ERR_IO: return "input/output error";
	case IBX_ERR_TRUNCATED: return "message truncated";
	case IBX_ERR_UNREACHABLE: return "peer unreachable";
	case IBX_ERR_TIMEOUT: return "timed out";
	case IBX_ERR_UNSUPPORTED: return "operation not supported";
	case IBX_ERR_NO_DEVICE: return "no usable verbs device";
	case IBX_ERR_BOOTSTRAP: return "bootstrap (PMIx) failure";
	case IBX_ERR_CANCELED: return "canceled";
	case IBX_ERR_REMOTE_ACCESS: return "remote access error";
	case IBX_ERR_CORRUPT: return "corrupt data from peer";
	case IBX_ERR_BUSY: return "resource busy";
	case IBX_ERR_NOT_FOUND: return "not found";
	case IBX_ERR_OVERFLOW: return "size overflow";
	case IBX_ERR_NO_RESOURCE: return "no resources";
	}
	return "unknown status";
}
