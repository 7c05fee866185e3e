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
 * them is deleted. Callbacks may call MPI (even on the same communicator):
 * nothing here is held across a callback.
 */
#include "mpil_int.h"

#include <stdlib.h>

/* User keyvals are numbered from here (the predefined ones are 1..7). */
#define KEYVAL_BASE 64

typedef struct keyval {
	MPI_Comm_copy_attr_function *copy_fn;
	MPI_Comm_delete_attr_function *delete_fn;
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

/* comm->attrs: the attributes in the order they were set */
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

/* The keyval object of a live user keyval, or NULL. */
static keyval_t *keyval_get(int keyval)
{
	int i = keyval - KEYVAL_BASE;

	if (i < 0 || i >= nkeyvals || keyvals[i].freed)
		return NULL;
	return &keyvals[i];
}

static void keyval_unref(int keyval)
{
	keyvals[keyval - KEYVAL_BASE].refs--;
}

static bool predefined_keyval(int keyval)
{
	return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* A callback's return value as an error class. */
static int callback_err(int rc)
{
	return rc > MPI_SUCCESS && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER;
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

static int append(MPI_Comm comm, int keyval, void *val)
{
	attr_list_t *l = comm->attrs;

	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return MPI_ERR_NO_MEM;
		comm->attrs = l;
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

/* Runs the delete callback of @comm's attribute @keyval (value @val). */
static int run_delete(MPI_Comm comm, int keyval, void *val)
{
	keyval_t *k = &keyvals[keyval - KEYVAL_BASE];
	int rc;

	if (!k->delete_fn || k->delete_fn == MPI_COMM_NULL_DELETE_FN)
		return MPI_SUCCESS;
	rc = k->delete_fn(comm, keyval, val, k->extra);
	return rc == MPI_SUCCESS ? MPI_SUCCESS : callback_err(rc);
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
		if (flag && (rc = append(newcomm, a.keyval, out)) != MPI_SUCCESS)
			return rc;
		l = old->attrs; /* the callback may have changed them */
	}
	return MPI_SUCCESS;
}

int mpil_attr_delete_all(MPI_Comm comm)
{
	attr_list_t *l;

	while ((l = comm->attrs) && l->n > 0) {
		attr_t a = l->v[l->n - 1];
		int err = run_delete(comm, a.keyval, a.val), i;

		if (err != MPI_SUCCESS)
			return err;
		l = comm->attrs;
		i = find(l, a.keyval);
		if (i >= 0)
			remove_at(l, i);
	}
	return MPI_SUCCESS;
}

void mpil_attr_drop(MPI_Comm comm)
{
	attr_list_t *l = comm->attrs;

	if (!l)
		return;
	while (l->n > 0)
		remove_at(l, l->n - 1);
	free(l->v);
	free(l);
	comm->attrs = NULL;
}

void mpil_attr_fini(void)
{
	free(keyvals);
	keyvals = NULL;
	nkeyvals = keyvals_cap = 0;
}

/* ---- keyvals -------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
			    MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
			    void *extra_state)
{
	static const char F[] = "MPI_Comm_create_keyval";
	keyval_t *k;

	MPIL_CHECK(mpil_check_init(F));
	if (!comm_keyval)
		return mpil_err(NULL, MPI_ERR_ARG, F, "comm_keyval is NULL");
	if (nkeyvals == keyvals_cap) {
		int ncap = keyvals_cap ? 2 * keyvals_cap : 16;
		keyval_t *nk = realloc(keyvals, (size_t)ncap * sizeof(*nk));

		if (!nk)
			return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a keyval");
		keyvals = nk;
		keyvals_cap = ncap;
	}
	k = &keyvals[nkeyvals];
	k->copy_fn = comm_copy_attr_fn;
	k->delete_fn = comm_delete_attr_fn;
	k->extra = extra_state;
	k->refs = 1;
	k->freed = false;
	*comm_keyval = KEYVAL_BASE + nkeyvals++;
	return MPI_SUCCESS;
}

static int bad_keyval(MPI_Comm comm, int keyval, const char *fname)
{
	if (predefined_keyval(keyval))
		return mpil_err(comm, MPI_ERR_KEYVAL, fname, "keyval %d is predefined (read-only)",
				keyval);
	return mpil_err(comm, MPI_ERR_KEYVAL, fname, "invalid keyval %d%s", keyval,
			keyval - KEYVAL_BASE >= 0 && keyval - KEYVAL_BASE < nkeyvals ? " (freed)"
										     : "");
}

MPIL_PMPI_ALIAS(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *comm_keyval)
{
	static const char F[] = "MPI_Comm_free_keyval";
	keyval_t *k;

	MPIL_CHECK(mpil_check_init(F));
	if (!comm_keyval)
		return mpil_err(NULL, MPI_ERR_ARG, F, "comm_keyval is NULL");
	k = keyval_get(*comm_keyval);
	if (!k)
		return bad_keyval(NULL, *comm_keyval, F);
	/* attributes still using it keep their callbacks */
	k->freed = true;
	k->refs--;
	*comm_keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

/* ---- attributes ------------------------------------------------------------------------ */

MPIL_PMPI_ALIAS(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	static const char F[] = "MPI_Comm_set_attr";
	int i, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!keyval_get(comm_keyval))
		return bad_keyval(comm, comm_keyval, F);
	i = find(comm->attrs, comm_keyval);
	if (i >= 0) {
		attr_list_t *l = comm->attrs;

		/* the old value goes first, through its delete callback */
		err = run_delete(comm, comm_keyval, l->v[i].val);
		if (err != MPI_SUCCESS)
			return mpil_err(comm, err, F,
					"the delete callback of keyval %d failed on the old value",
					comm_keyval);
		l = comm->attrs;
		i = find(l, comm_keyval);
		if (i >= 0) {
			l->v[i].val = attribute_val;
			return MPI_SUCCESS;
		}
	}
	err = append(comm, comm_keyval, attribute_val);
	if (err != MPI_SUCCESS)
		return mpil_err(comm, err, F, "no memory for an attribute");
	return MPI_SUCCESS;
}

/* The predefined attributes (MPI-3.1 §8.1.2): the value is a pointer to an
 * int that stays valid. */
static int attr_tag_ub = MPIL_TAG_UB;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE; /* every process can do I/O */
static int attr_wtime_is_global = 0;
static int attr_universe_size;
static int attr_lastusedcode = MPI_ERR_LASTCODE;

MPIL_PMPI_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	static const char F[] = "MPI_Comm_get_attr";
	int *val, i;

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
	case MPI_LASTUSEDCODE: val = &attr_lastusedcode; break;
	case MPI_APPNUM: /* not started as part of an MPMD launch */ *flag = 0; return MPI_SUCCESS;
	default:
		if (!keyval_get(comm_keyval))
			return bad_keyval(comm, comm_keyval, F);
		i = find(comm->attrs, comm_keyval);
		*flag = i >= 0;
		if (i >= 0)
			*(void **)attribute_val = ((attr_list_t *)comm->attrs)->v[i].val;
		return MPI_SUCCESS;
	}
	*(int **)attribute_val = val;
	*flag = 1;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
	static const char F[] = "MPI_Comm_delete_attr";
	int i, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!keyval_get(comm_keyval))
		return bad_keyval(comm, comm_keyval, F);
	i = find(comm->attrs, comm_keyval);
	if (i < 0)
		return MPI_SUCCESS; /* nothing cached: nothing to delete */
	err = run_delete(comm, comm_keyval, ((attr_list_t *)comm->attrs)->v[i].val);
	if (err != MPI_SUCCESS)
		return mpil_err(comm, err, F, "the delete callback of keyval %d failed",
				comm_keyval);
	i = find(comm->attrs, comm_keyval);
	if (i >= 0)
		remove_at(comm->attrs, i);
	return MPI_SUCCESS;
}
