/*
 * win_attr.c — what a window is besides its memory (MPI-3.1 §11.2.6-7,
 * §6.7.3, §8.3.2): its group and name, cached attributes (the predefined
 * MPI_WIN_BASE ... MPI_WIN_MODEL and user keyvals, on attr.c's machinery),
 * error handlers, and the info hints that change how mpi-lite runs it.
 *
 * Predefined attributes, as Open MPI and MPICH return them:
 *
 *   MPI_WIN_BASE           *(void **)attribute_val = the base address itself
 *   MPI_WIN_SIZE           *(MPI_Aint **)attribute_val -> the size in bytes
 *   MPI_WIN_DISP_UNIT      *(int **)attribute_val -> the displacement unit
 *   MPI_WIN_CREATE_FLAVOR  *(int **)attribute_val -> MPI_WIN_FLAVOR_*
 *   MPI_WIN_MODEL          *(int **)attribute_val -> MPI_WIN_UNIFIED (loads
 *                          and stores see RMA results once synchronised:
 *                          every route of the engine writes the memory itself)
 *
 * Hints (MPI-3.1 §11.2.1 and §11.7.2); a known key with a value that is not
 * one of those below is MPI_ERR_INFO_VALUE (unknown keys are kept, unread):
 *
 *   no_locks                true | false (default): true makes MPI_Win_lock
 *                           and MPI_Win_lock_all MPI_ERR_RMA_SYNC (win_sync.c)
 *   accumulate_ordering     "none" or a comma list of rar, raw, war, waw
 *                           (default: all four)
 *   accumulate_ops          same_op_no_op (default) | same_op
 *   same_size               true | false: every member passed the same size
 *   same_disp_unit          true | false: ... the same displacement unit
 *   alloc_shared_noncontig  true | false: MPI_Win_allocate_shared may start
 *                           each member's part on a page of its own
 *
 * MPI_Win_set_info changes the first three; the last three describe how the
 * window was made and keep their creation values. MPI_Win_get_info returns
 * the hints as given plus every hint above with the value in force.
 */
#include "attr_int.h"
#include "win_int.h"

#include <stdlib.h>

/* ---- errors ------------------------------------------------------------------------------ */

int mpil_win_err(MPI_Win win, int errclass, const char *fname, const char *fmt, ...)
{
	char detail[384];
	va_list ap;
	MPI_Errhandler eh;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (!mpil_win_valid(win))
		return mpil_err(NULL, errclass, fname, "%s", detail);
	eh = win->errhandler;
	switch (eh->kind) {
	case MPIL_ERRH_RETURN: return errclass;
	case MPIL_ERRH_WIN_USER: {
		MPI_Win w = win;
		int code = errclass;

		eh->win_fn(&w, &code);
		return errclass;
	}
	default: {
		char msg[512];

		if (win->name[0])
			snprintf(msg, sizeof(msg), "%s (window \"%s\")", detail, win->name);
		else
			snprintf(msg, sizeof(msg), "%s", detail);
		mpil_err_fatal(errclass, fname, msg);
	}
	}
}

int mpil_win_check_failed(MPI_Win win, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	if (mpil_win_valid(win))
		return MPI_SUCCESS;
	if (!win)
		return mpil_err(NULL, MPI_ERR_WIN, fname, "window is MPI_WIN_NULL");
	return mpil_err(NULL, MPI_ERR_WIN, fname, "invalid window handle %p%s", (void *)win,
			win->magic == MPIL_MAGIC_DEAD ? " (freed)" : "");
}

/* ---- error handlers ------------------------------------------------------------------------ */

MPIL_PMPI_ALIAS(Win_create_errhandler)
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
			       MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_Win_create_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler eh;

	MPIL_CHECK(mpil_check_init(F));
	if (!win_errhandler_fn || !errhandler)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				errhandler ? "win_errhandler_fn" : "errhandler");
	eh = calloc(1, sizeof(*eh));
	if (!eh)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "allocating an error handler");
	eh->magic = MPIL_MAGIC_ERRH;
	eh->kind = MPIL_ERRH_WIN_USER;
	eh->refcount = 1;
	eh->win_fn = win_errhandler_fn;
	*errhandler = eh;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_set_errhandler)
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
	static const char F[] = "MPI_Win_set_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler old;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!errhandler || errhandler->magic != MPIL_MAGIC_ERRH)
		return mpil_win_err(win, MPI_ERR_ARG, F, "invalid error handler %p",
				    (void *)errhandler);
	if (errhandler->kind == MPIL_ERRH_USER || errhandler->kind == MPIL_ERRH_FILE_USER)
		return mpil_win_err(win, MPI_ERR_ARG, F, "error handler %p was made for %s",
				    (void *)errhandler,
				    errhandler->kind == MPIL_ERRH_USER ? "communicators" : "files");
	old = win->errhandler;
	if (!errhandler->predefined)
		errhandler->refcount++;
	win->errhandler = errhandler;
	mpil_errh_release(old);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_get_errhandler)
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_Win_get_errhandler";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	if (!errhandler)
		return mpil_win_err(win, MPI_ERR_ARG, F, "errhandler is NULL");
	/* the caller owns a reference (MPI_Errhandler_free releases it) */
	if (!win->errhandler->predefined)
		win->errhandler->refcount++;
	*errhandler = win->errhandler;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_call_errhandler)
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
	static const char F[] = "MPI_Win_call_errhandler";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	mpil_win_err(win, errorcode, F, "raised by the application");
	return MPI_SUCCESS;
}

/* ---- group and name ------------------------------------------------------------------------ */

MPIL_PMPI_ALIAS(Win_get_group)
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	static const char F[] = "MPI_Win_get_group";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!group)
		return mpil_win_err(win, MPI_ERR_ARG, F, "group is NULL");
	/* the window's communicator returns errors (MPI_ERRORS_RETURN) */
	err = PMPI_Comm_group(win->comm, group);
	if (err != MPI_SUCCESS)
		return mpil_win_err(win, err, F, "no memory for the group");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_set_name)
int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
	static const char F[] = "MPI_Win_set_name";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	if (!win_name)
		return mpil_win_err(win, MPI_ERR_ARG, F, "win_name is NULL");
	/* longer names are cut to MPI_MAX_OBJECT_NAME - 1 characters */
	snprintf(win->name, sizeof(win->name), "%s", win_name);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_get_name)
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
	static const char F[] = "MPI_Win_get_name";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	if (!win_name || !resultlen)
		return mpil_win_err(win, MPI_ERR_ARG, F, "%s is NULL",
				    win_name ? "resultlen" : "win_name");
	memcpy(win_name, win->name, sizeof(win->name));
	*resultlen = (int)strlen(win_name);
	return MPI_SUCCESS;
}

/* ---- keyvals and attributes ---------------------------------------------------------------- */

int mpil_win_null_copy_fn(MPI_Win oldwin, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)oldwin, (void)keyval, (void)extra, (void)in, (void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

int mpil_win_dup_fn(MPI_Win oldwin, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)oldwin, (void)keyval, (void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mpil_win_null_delete_fn(MPI_Win win, int keyval, void *val, void *extra)
{
	(void)win, (void)keyval, (void)val, (void)extra;
	return MPI_SUCCESS;
}

static bool predefined_keyval(int keyval)
{
	return keyval <= MPI_WIN_BASE && keyval >= MPI_WIN_MODEL;
}

static int bad_keyval(MPI_Win win, int keyval, const char *fname)
{
	if (predefined_keyval(keyval))
		return mpil_win_err(win, MPI_ERR_KEYVAL, fname,
				    "keyval %d is predefined (read-only)", keyval);
	return mpil_win_err(win, MPI_ERR_KEYVAL, fname, "invalid window keyval %d (%s)", keyval,
			    mpil_keyval_why(MPIL_ATTR_WIN, keyval));
}

MPIL_PMPI_ALIAS(Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
			   MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
			   void *extra_state)
{
	static const char F[] = "MPI_Win_create_keyval";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!win_keyval)
		return mpil_err(NULL, MPI_ERR_ARG, F, "win_keyval is NULL");
	/* windows are never copied: the copy callback is accepted, never run */
	(void)win_copy_attr_fn;
	if (mpil_keyval_create(MPIL_ATTR_WIN, NULL, NULL, win_delete_attr_fn, extra_state,
			       win_keyval) != MPI_SUCCESS)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a keyval");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_free_keyval)
int PMPI_Win_free_keyval(int *win_keyval)
{
	static const char F[] = "MPI_Win_free_keyval";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!win_keyval)
		return mpil_err(NULL, MPI_ERR_ARG, F, "win_keyval is NULL");
	if (mpil_keyval_free(MPIL_ATTR_WIN, win_keyval) != MPI_SUCCESS)
		return bad_keyval(NULL, *win_keyval, F);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_set_attr)
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
	static const char F[] = "MPI_Win_set_attr";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!mpil_keyval_valid(MPIL_ATTR_WIN, win_keyval))
		return bad_keyval(win, win_keyval, F);
	err = mpil_attrs_set(win, &win->attrs, win_keyval, attribute_val);
	if (err == MPI_ERR_NO_MEM)
		return mpil_win_err(win, err, F, "no memory for an attribute");
	if (err != MPI_SUCCESS)
		return mpil_win_err(win, err, F,
				    "the delete callback of keyval %d failed on the old value",
				    win_keyval);
	return MPI_SUCCESS;
}

static int attr_model = MPI_WIN_UNIFIED;

MPIL_PMPI_ALIAS(Win_get_attr)
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
	static const char F[] = "MPI_Win_get_attr";
	MPIL_CS_GUARD();
	void *v;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!attribute_val || !flag)
		return mpil_win_err(win, MPI_ERR_ARG, F, "%s is NULL",
				    flag ? "attribute_val" : "flag");
	*flag = 1;
	switch (win_keyval) {
	case MPI_WIN_BASE: *(void **)attribute_val = win->base; return MPI_SUCCESS;
	case MPI_WIN_SIZE: *(MPI_Aint **)attribute_val = &win->size_bytes; return MPI_SUCCESS;
	case MPI_WIN_DISP_UNIT: *(int **)attribute_val = &win->disp_unit; return MPI_SUCCESS;
	case MPI_WIN_CREATE_FLAVOR: *(int **)attribute_val = &win->flavor; return MPI_SUCCESS;
	case MPI_WIN_MODEL: *(int **)attribute_val = &attr_model; return MPI_SUCCESS;
	default: break;
	}
	*flag = 0;
	if (!mpil_keyval_alive(MPIL_ATTR_WIN, win_keyval))
		return bad_keyval(win, win_keyval, F);
	*flag = mpil_attrs_get(&win->attrs, win_keyval, &v);
	if (*flag)
		*(void **)attribute_val = v;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_delete_attr)
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
	static const char F[] = "MPI_Win_delete_attr";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!mpil_keyval_alive(MPIL_ATTR_WIN, win_keyval))
		return bad_keyval(win, win_keyval, F);
	err = mpil_attrs_delete(win, &win->attrs, win_keyval);
	if (err != MPI_SUCCESS)
		return mpil_win_err(win, err, F, "the delete callback of keyval %d failed",
				    win_keyval);
	return MPI_SUCCESS;
}

int mpil_win_attr_delete_all(MPI_Win win)
{
	return mpil_attrs_delete_all(win, &win->attrs);
}

/* ---- info hints ---------------------------------------------------------------------------- */

/* The hints a window runs with. */
typedef struct win_hints {
	bool no_locks, same_size, same_disp_unit, noncontig;
	unsigned acc_ordering;
	int acc_ops;
} win_hints_t;

static const char *const order_names[] = {"rar", "raw", "war", "waw"};

/* "true" / "false" into *b; false if it is neither. */
static bool parse_bool(const char *v, bool *b)
{
	if (strcmp(v, "true") == 0)
		*b = true;
	else if (strcmp(v, "false") == 0)
		*b = false;
	else
		return false;
	return true;
}

/* "none" or a comma list of rar, raw, war, waw (spaces around items allowed). */
static bool parse_ordering(const char *v, unsigned *bits_p)
{
	unsigned bits = 0;
	const char *p = v;

	while (*p == ' ')
		p++;
	if (strncmp(p, "none", 4) == 0) {
		p += 4;
		while (*p == ' ')
			p++;
		*bits_p = 0;
		return *p == '\0';
	}
	for (;;) {
		size_t n;
		int i;

		while (*p == ' ')
			p++;
		for (n = 0; p[n] && p[n] != ',' && p[n] != ' '; n++)
			;
		for (i = 0; i < 4; i++)
			if (n == 3 && strncmp(p, order_names[i], 3) == 0)
				break;
		if (i == 4)
			return false;
		bits |= 1u << i;
		p += n;
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return false;
	}
	*bits_p = bits;
	return true;
}

static void format_ordering(unsigned bits, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < 4; i++)
		if (bits & (1u << i))
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "",
						 order_names[i]);
	if (!bits)
		snprintf(out, len, "none");
}

/* Reads the hints of @info over @h; a bad value is MPI_ERR_INFO_VALUE with
 * the key in *bad_key. */
static int parse_hints(MPI_Info info, win_hints_t *h, const char **bad_key, const char **bad_val,
		       char *val)
{
	static const char *const bools[] = {"no_locks", "same_size", "same_disp_unit",
					    "alloc_shared_noncontig"};
	bool *const targets[] = {&h->no_locks, &h->same_size, &h->same_disp_unit, &h->noncontig};
	int flag;

	for (int i = 0; i < 4; i++) {
		PMPI_Info_get(info, bools[i], MPI_MAX_INFO_VAL, val, &flag);
		if (flag && !parse_bool(val, targets[i])) {
			*bad_key = bools[i];
			*bad_val = "true or false";
			return MPI_ERR_INFO_VALUE;
		}
	}
	PMPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, val, &flag);
	if (flag && !parse_ordering(val, &h->acc_ordering)) {
		*bad_key = "accumulate_ordering";
		*bad_val = "none, or a comma list of rar, raw, war, waw";
		return MPI_ERR_INFO_VALUE;
	}
	PMPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL, val, &flag);
	if (flag) {
		if (strcmp(val, "same_op_no_op") == 0)
			h->acc_ops = MPIL_ACC_OPS_SAME_OP_NO_OP;
		else if (strcmp(val, "same_op") == 0)
			h->acc_ops = MPIL_ACC_OPS_SAME_OP;
		else {
			*bad_key = "accumulate_ops";
			*bad_val = "same_op_no_op or same_op";
			return MPI_ERR_INFO_VALUE;
		}
	}
	return MPI_SUCCESS;
}

/* Sets every key of @from in *@to (created if it is MPI_INFO_NULL). */
static int info_merge(MPI_Info *to, MPI_Info from)
{
	char key[MPI_MAX_INFO_KEY + 1], *val;
	int n, flag, err = MPI_SUCCESS;

	if (!from)
		return MPI_SUCCESS;
	if (!*to)
		return mpil_info_copy(from, to);
	val = malloc(MPI_MAX_INFO_VAL + 1);
	if (!val)
		return MPI_ERR_NO_MEM;
	PMPI_Info_get_nkeys(from, &n);
	for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
		PMPI_Info_get_nthkey(from, i, key);
		PMPI_Info_get(from, key, MPI_MAX_INFO_VAL, val, &flag);
		err = PMPI_Info_set(*to, key, val);
	}
	free(val);
	return err;
}

/*
 * At creation (the window not yet valid: errors go to the creating
 * communicator, win->comm then) every hint is read; afterwards only those
 * that MPI_Win_set_info may change.
 */
int mpil_win_apply_info(MPI_Win win, MPI_Info info, const char *fname)
{
	bool creating = win->magic != MPIL_MAGIC_WIN;
	const char *bad_key = NULL, *bad_val = NULL;
	win_hints_t h = {
	    .no_locks = win->no_locks,
	    .same_size = win->same_size,
	    .same_disp_unit = win->same_disp_unit,
	    .noncontig = win->alloc_shared_noncontig,
	    .acc_ordering = win->acc_ordering,
	    .acc_ops = win->acc_ops,
	};
	char *val;
	int err;

	if (!info)
		return MPI_SUCCESS;
	val = malloc(MPI_MAX_INFO_VAL + 1);
	if (!val)
		return creating ? mpil_err(win->comm, MPI_ERR_NO_MEM, fname, "no memory")
				: mpil_win_err(win, MPI_ERR_NO_MEM, fname, "no memory");
	err = parse_hints(info, &h, &bad_key, &bad_val, val);
	if (err != MPI_SUCCESS) {
		char shown[64];

		snprintf(shown, sizeof(shown), "%s", val);
		free(val);
		if (creating)
			return mpil_err(win->comm, err, fname, "info %s=\"%s\": expected %s",
					bad_key, shown, bad_val);
		return mpil_win_err(win, err, fname, "info %s=\"%s\": expected %s", bad_key, shown,
				    bad_val);
	}
	free(val);
	win->no_locks = h.no_locks;
	win->acc_ordering = h.acc_ordering;
	win->acc_ops = h.acc_ops;
	if (creating) {
		win->same_size = h.same_size;
		win->same_disp_unit = h.same_disp_unit;
		win->alloc_shared_noncontig = h.noncontig;
	}
	err = info_merge(&win->info, info);
	if (err != MPI_SUCCESS)
		return creating ? mpil_err(win->comm, err, fname, "keeping the info hints")
				: mpil_win_err(win, err, fname, "keeping the info hints");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_set_info)
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	static const char F[] = "MPI_Win_set_info";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	if (!info || *(const uint32_t *)info != MPIL_MAGIC_INFO)
		return mpil_win_err(win, MPI_ERR_INFO, F, "invalid info handle %p%s", (void *)info,
				    info ? "" : " (MPI_INFO_NULL)");
	return mpil_win_apply_info(win, info, F);
}

MPIL_PMPI_ALIAS(Win_get_info)
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
	static const char F[] = "MPI_Win_get_info";
	MPIL_CS_GUARD();
	char order[32];
	MPI_Info info = MPI_INFO_NULL;
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!info_used)
		return mpil_win_err(win, MPI_ERR_ARG, F, "info_used is NULL");
	err = win->info ? mpil_info_copy(win->info, &info) : PMPI_Info_create(&info);
	if (err != MPI_SUCCESS)
		return mpil_win_err(win, err, F, "no memory for the info object");
	format_ordering(win->acc_ordering, order, sizeof(order));
	err = PMPI_Info_set(info, "no_locks", win->no_locks ? "true" : "false");
	if (err == MPI_SUCCESS)
		err = PMPI_Info_set(info, "accumulate_ordering", order);
	if (err == MPI_SUCCESS)
		err = PMPI_Info_set(info, "accumulate_ops",
				    win->acc_ops == MPIL_ACC_OPS_SAME_OP ? "same_op"
									 : "same_op_no_op");
	if (err == MPI_SUCCESS)
		err = PMPI_Info_set(info, "same_size", win->same_size ? "true" : "false");
	if (err == MPI_SUCCESS)
		err = PMPI_Info_set(info, "same_disp_unit", win->same_disp_unit ? "true" : "false");
	if (err == MPI_SUCCESS)
		err = PMPI_Info_set(info, "alloc_shared_noncontig",
				    win->alloc_shared_noncontig ? "true" : "false");
	if (err != MPI_SUCCESS) {
		mpil_info_release(info);
		return mpil_win_err(win, err, F, "no memory for the info object");
	}
	*info_used = info;
	return MPI_SUCCESS;
}
