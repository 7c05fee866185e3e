/*
 * attr.c — attribute caching on communicators (MPI-3.1 §6.7): keyvals with
 * their copy and delete callbacks, the attributes a communicator caches,
 * and the predefined attributes (MPI_TAG_UB and friends).
 *
 * Callbacks are where libraries hook into a communicator's life:
 *
 *   MPI_Comm_dup(old)   for each attribute of old, oldest first:
 *                         copy_fn(old, keyval, extra, val, &newval, &flag)
 *                         flag ? the new communicator caches newval
 *   MPI_Comm_free(c)    for each attribute, newest first:
 *   MPI_Comm_delete_attr  delete_fn(c, keyval, val, extra)
 *   MPI_Comm_set_attr     (replacing a value deletes the old one first)
 *   MPI_Finalize        the attributes of MPI_COMM_SELF, then of
 *                       MPI_COMM_WORLD, are deleted (MPI-3.1 §8.7.1)
 *
 * A callback's error fails the call that ran it (the attribute stays).
 * A keyval freed while attributes still use it lives until the last of
 * them is deleted (MPI-3.1 §6.7.2): until then its value still reads and
 * deletes them, as in MPICH; a new attribute needs a live keyval.
 * Callbacks may call MPI (even on the same communicator): nothing here is
 * held across a callback.
 *
 * Windows (win_attr.c) cache attributes through the same machinery: the
 * keyvals of both kinds share one numbering, each keyval knows its kind
 * (a communicator keyval used on a window is MPI_ERR_KEYVAL), and the
 * mpil_attrs_* calls below work on any object's attribute list.
 */
#include "attr_int.h"

#include <stdlib.h>

/* User keyvals are numbered from here (the predefined ones are 1..7). */
#define KEYVAL_BASE 64

typedef struct keyval {
	int kind; /* enum mpil_attr_kind */
	MPI_Comm_copy_attr_function *copy_fn;
	MPI_Comm_delete_attr_function *delete_fn;
	MPI_Win_delete_attr_function *win_delete_fn; /* windows (never copied) */
	void *extra;
	int refs;   /* the user's handle (until freed) + attributes using it */
	bool freed; /* MPI_Comm_free_keyval was called */
} keyval_t;

static keyval_t *keyvals;
static int nkeyvals, keyvals_cap;

typedef struct attr {
	int keyval;
	void *val;
} attr_t;

/* comm->attrs, win->attrs: the attributes in the order they were set */
typedef struct attr_list {
	attr_t *v;
	int n, cap;
} attr_list_t;

int mpil_comm_null_copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
			   int *flag)
{
	(void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

int mpil_comm_dup_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)oldcomm, (void)keyval, (void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int mpil_comm_null_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)val, (void)extra;
	return MPI_SUCCESS;
}

/* The keyval object of a live user keyval of @kind, or NULL. */
static keyval_t *keyval_get_kind(int kind, int keyval)
{
	int i = keyval - KEYVAL_BASE;

	if (i < 0 || i >= nkeyvals || keyvals[i].freed || keyvals[i].kind != kind)
		return NULL;
	return &keyvals[i];
}

static keyval_t *keyval_get(int keyval)
{
	return keyval_get_kind(MPIL_ATTR_COMM, keyval);
}

static void keyval_unref(int keyval)
{
	keyvals[keyval - KEYVAL_BASE].refs--;
}

static bool predefined_keyval(int keyval)
{
	return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* A callback's return value as an error code (one the program added
 * included). */
static int callback_err(int rc)
{
	return rc > MPI_SUCCESS && rc <= mpil_errcode_last() ? rc : MPI_ERR_OTHER;
}

static int find(const attr_list_t *l, int keyval)
{
	for (int i = 0; l && i < l->n; i++)
		if (l->v[i].keyval == keyval)
			return i;
	return -1;
}

static void remove_at(attr_list_t *l, int i)
{
	keyval_unref(l->v[i].keyval);
	memmove(&l->v[i], &l->v[i + 1], (size_t)(l->n - i - 1) * sizeof(*l->v));
	l->n--;
}

static int append(void **attrs, int keyval, void *val)
{
	attr_list_t *l = *attrs;

	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return MPI_ERR_NO_MEM;
		*attrs = l;
	}
	if (l->n == l->cap) {
		int ncap = l->cap ? 2 * l->cap : 4;
		attr_t *nv = realloc(l->v, (size_t)ncap * sizeof(*nv));

		if (!nv)
			return MPI_ERR_NO_MEM;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n].keyval = keyval;
	l->v[l->n].val = val;
	l->n++;
	keyvals[keyval - KEYVAL_BASE].refs++;
	return MPI_SUCCESS;
}

/* Runs the delete callback of @obj's attribute @keyval (value @val). */
static int run_delete(void *obj, int keyval, void *val)
{
	keyval_t *k = &keyvals[keyval - KEYVAL_BASE];
	int rc;

	if (k->kind == MPIL_ATTR_WIN) {
		if (!k->win_delete_fn || k->win_delete_fn == MPI_WIN_NULL_DELETE_FN)
			return MPI_SUCCESS;
		rc = k->win_delete_fn(obj, keyval, val, k->extra);
	} else {
		if (!k->delete_fn || k->delete_fn == MPI_COMM_NULL_DELETE_FN)
			return MPI_SUCCESS;
		rc = k->delete_fn(obj, keyval, val, k->extra);
	}
	return rc == MPI_SUCCESS ? MPI_SUCCESS : callback_err(rc);
}

/* ---- any object's attributes (communicators here, windows in win_attr.c) ---------------- */

int mpil_keyval_create(int kind, MPI_Comm_copy_attr_function *copy_fn,
		       MPI_Comm_delete_attr_function *delete_fn,
		       MPI_Win_delete_attr_function *win_delete_fn, void *extra, int *keyval_p)
{
	keyval_t *k;

	if (nkeyvals == keyvals_cap) {
		int ncap = keyvals_cap ? 2 * keyvals_cap : 16;
		keyval_t *nk = realloc(keyvals, (size_t)ncap * sizeof(*nk));

		if (!nk)
			return MPI_ERR_NO_MEM;
		keyvals = nk;
		keyvals_cap = ncap;
	}
	k = &keyvals[nkeyvals];
	k->kind = kind;
	k->copy_fn = copy_fn;
	k->delete_fn = delete_fn;
	k->win_delete_fn = win_delete_fn;
	k->extra = extra;
	k->refs = 1;
	k->freed = false;
	*keyval_p = KEYVAL_BASE + nkeyvals++;
	return MPI_SUCCESS;
}

bool mpil_keyval_valid(int kind, int keyval)
{
	return keyval_get_kind(kind, keyval) != NULL;
}

bool mpil_keyval_alive(int kind, int keyval)
{
	int i = keyval - KEYVAL_BASE;

	return i >= 0 && i < nkeyvals && keyvals[i].kind == kind &&
	       (!keyvals[i].freed || keyvals[i].refs > 0);
}

const char *mpil_keyval_why(int kind, int keyval)
{
	int i = keyval - KEYVAL_BASE;

	if (i < 0 || i >= nkeyvals)
		return "not a keyval";
	if (keyvals[i].freed)
		return "freed";
	if (keyvals[i].kind != kind)
		return kind == MPIL_ATTR_WIN ? "a communicator keyval, not a window keyval"
					     : "a window keyval, not a communicator keyval";
	return "valid";
}

int mpil_keyval_free(int kind, int *keyval)
{
	keyval_t *k = keyval_get_kind(kind, *keyval);

	if (!k)
		return MPI_ERR_KEYVAL;
	/* attributes still using it keep their callbacks */
	k->freed = true;
	k->refs--;
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

int mpil_attrs_set(void *obj, void **attrs, int keyval, void *val)
{
	int i = find(*attrs, keyval), err;

	if (i >= 0) {
		attr_list_t *l = *attrs;

		/* the old value goes first, through its delete callback */
		err = run_delete(obj, keyval, l->v[i].val);
		if (err != MPI_SUCCESS)
			return err;
		l = *attrs;
		i = find(l, keyval);
		if (i >= 0) {
			l->v[i].val = val;
			return MPI_SUCCESS;
		}
	}
	return append(attrs, keyval, val);
}

bool mpil_attrs_get(void *const *attrs, int keyval, void **val_p)
{
	int i = find(*attrs, keyval);

	if (i >= 0)
		*val_p = ((attr_list_t *)*attrs)->v[i].val;
	return i >= 0;
}

int mpil_attrs_delete(void *obj, void **attrs, int keyval)
{
	int i = find(*attrs, keyval), err;

	if (i < 0)
		return MPI_SUCCESS; /* nothing cached: nothing to delete */
	err = run_delete(obj, keyval, ((attr_list_t *)*attrs)->v[i].val);
	if (err != MPI_SUCCESS)
		return err;
	i = find(*attrs, keyval);
	if (i >= 0)
		remove_at(*attrs, i);
	return MPI_SUCCESS;
}

int mpil_attrs_delete_all(void *obj, void **attrs)
{
	attr_list_t *l;

	while ((l = *attrs) && l->n > 0) {
		attr_t a = l->v[l->n - 1];
		int err = run_delete(obj, a.keyval, a.val), i;

		if (err != MPI_SUCCESS)
			return err;
		l = *attrs;
		i = find(l, a.keyval);
		if (i >= 0)
			remove_at(l, i);
	}
	return MPI_SUCCESS;
}

void mpil_attrs_drop(void **attrs)
{
	attr_list_t *l = *attrs;

	if (!l)
		return;
	while (l->n > 0)
		remove_at(l, l->n - 1);
	free(l->v);
	free(l);
	*attrs = NULL;
}

/* ---- hooks for comm.c ---------------------------------------------------------------- */

int mpil_attr_dup(MPI_Comm old, MPI_Comm newcomm)
{
	const attr_list_t *l = old->attrs;

	for (int i = 0; l && i < l->n; i++) {
		attr_t a = l->v[i];
		keyval_t *k = &keyvals[a.keyval - KEYVAL_BASE];
		void *out = NULL;
		int flag = 0, rc;

		if (!k->copy_fn || k->copy_fn == MPI_COMM_NULL_COPY_FN)
			continue;
		rc = k->copy_fn(old, a.keyval, k->extra, a.val, &out, &flag);
		if (rc != MPI_SUCCESS)
			return callback_err(rc);
		if (flag && (rc = append(&newcomm->attrs, a.keyval, out)) != MPI_SUCCESS)
			return rc;
		l = old->attrs; /* the callback may have changed them */
	}
	return MPI_SUCCESS;
}

int mpil_attr_delete_all(MPI_Comm comm)
{
	return mpil_attrs_delete_all(comm, &comm->attrs);
}

void mpil_attr_drop(MPI_Comm comm)
{
	mpil_attrs_drop(&comm->attrs);
}

void mpil_attr_fini(void)
{
	free(keyvals);
	keyvals = NULL;
	nkeyvals = keyvals_cap = 0;
}

/* ---- keyvals -------------------------------------------------------------------------- */

/* Each communicator call below is also reached by its MPI-1 name
 * (MPI_Keyval_create, MPI_Keyval_free, MPI_Attr_put, MPI_Attr_get,
 * MPI_Attr_delete: deprecated since MPI-2.0, still in Open MPI and MPICH
 * and in older codes), which reports errors under its own name. */

static int comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
			      MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
			      void *extra_state, const char *F)
{
	MPIL_CHECK(mpil_check_init(F));
	if (!comm_keyval)
		return mpil_err(NULL, MPI_ERR_ARG, F, "comm_keyval is NULL");
	if (mpil_keyval_create(MPIL_ATTR_COMM, comm_copy_attr_fn, comm_delete_attr_fn, NULL,
			       extra_state, comm_keyval) != MPI_SUCCESS)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a keyval");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
			    MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
			    void *extra_state)
{
	MPIL_CS_GUARD();

	return comm_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state,
				  "MPI_Comm_create_keyval");
}

MPIL_PMPI_ALIAS(Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
		       void *extra_state)
{
	MPIL_CS_GUARD();

	return comm_create_keyval(copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}

static int bad_keyval(MPI_Comm comm, int keyval, const char *fname)
{
	if (predefined_keyval(keyval))
		return mpil_err(comm, MPI_ERR_KEYVAL, fname, "keyval %d is predefined (read-only)",
				keyval);
	return mpil_err(comm, MPI_ERR_KEYVAL, fname, "invalid keyval %d (%s)", keyval,
			mpil_keyval_why(MPIL_ATTR_COMM, keyval));
}

static int comm_free_keyval(int *comm_keyval, const char *F)
{
	MPIL_CHECK(mpil_check_init(F));
	if (!comm_keyval)
		return mpil_err(NULL, MPI_ERR_ARG, F, "comm_keyval is NULL");
	if (mpil_keyval_free(MPIL_ATTR_COMM, comm_keyval) != MPI_SUCCESS)
		return bad_keyval(NULL, *comm_keyval, F);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *comm_keyval)
{
	MPIL_CS_GUARD();

	return comm_free_keyval(comm_keyval, "MPI_Comm_free_keyval");
}

MPIL_PMPI_ALIAS(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
	MPIL_CS_GUARD();

	return comm_free_keyval(keyval, "MPI_Keyval_free");
}

/* ---- attributes ------------------------------------------------------------------------ */

static int comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, const char *F)
{
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!keyval_get(comm_keyval))
		return bad_keyval(comm, comm_keyval, F);
	err = mpil_attrs_set(comm, &comm->attrs, comm_keyval, attribute_val);
	if (err == MPI_ERR_NO_MEM)
		return mpil_err(comm, err, F, "no memory for an attribute");
	if (err != MPI_SUCCESS)
		return mpil_err(comm, err, F,
				"the delete callback of keyval %d failed on the old value",
				comm_keyval);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	MPIL_CS_GUARD();

	return comm_set_attr(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}

MPIL_PMPI_ALIAS(Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	MPIL_CS_GUARD();

	return comm_set_attr(comm, keyval, attribute_val, "MPI_Attr_put");
}

/* The predefined attributes (MPI-3.1 §8.1.2): the value is a pointer to an
 * int that stays valid. */
static int attr_tag_ub = MPIL_TAG_UB;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE; /* every process can do I/O */
static int attr_wtime_is_global = 0;
static int attr_universe_size;
static int attr_lastusedcode = MPI_ERR_LASTCODE;

static int comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag,
			 const char *F)
{
	void *v;
	int *val;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!attribute_val || !flag)
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL",
				flag ? "attribute_val" : "flag");
	switch (comm_keyval) {
	case MPI_TAG_UB: val = &attr_tag_ub; break;
	case MPI_HOST: val = &attr_host; break;
	case MPI_IO: val = &attr_io; break;
	case MPI_WTIME_IS_GLOBAL: val = &attr_wtime_is_global; break;
	case MPI_UNIVERSE_SIZE:
		attr_universe_size = mpil_g.world_size;
		val = &attr_universe_size;
		break;
	case MPI_LASTUSEDCODE:
		attr_lastusedcode = mpil_errcode_last();
		val = &attr_lastusedcode;
		break;
	case MPI_APPNUM: /* not started as part of an MPMD launch */ *flag = 0; return MPI_SUCCESS;
	default:
		if (!mpil_keyval_alive(MPIL_ATTR_COMM, comm_keyval))
			return bad_keyval(comm, comm_keyval, F);
		*flag = mpil_attrs_get(&comm->attrs, comm_keyval, &v);
		if (*flag)
			*(void **)attribute_val = v;
		return MPI_SUCCESS;
	}
	*(int **)attribute_val = val;
	*flag = 1;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	MPIL_CS_GUARD();

	return comm_get_attr(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}

MPIL_PMPI_ALIAS(Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	MPIL_CS_GUARD();

	return comm_get_attr(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}

static int comm_delete_attr(MPI_Comm comm, int comm_keyval, const char *F)
{
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!mpil_keyval_alive(MPIL_ATTR_COMM, comm_keyval))
		return bad_keyval(comm, comm_keyval, F);
	err = mpil_attrs_delete(comm, &comm->attrs, comm_keyval);
	if (err != MPI_SUCCESS)
		return mpil_err(comm, err, F, "the delete callback of keyval %d failed",
				comm_keyval);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
	MPIL_CS_GUARD();

	return comm_delete_attr(comm, comm_keyval, "MPI_Comm_delete_attr");
}

MPIL_PMPI_ALIAS(Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	MPIL_CS_GUARD();

	return comm_delete_attr(comm, keyval, "MPI_Attr_delete");
}
