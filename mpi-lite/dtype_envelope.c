/*
 * dtype_envelope.c — datatype decoding (MPI-3.1 §4.1.13): every derived
 * type keeps a record of the constructor call that made it, and
 * MPI_Type_get_envelope / MPI_Type_get_contents hand it back.
 *
 *   MPI_Type_vector(3, 2, 4, MPI_INT, &t)
 *     t->contents ─► { MPI_COMBINER_VECTOR, ints {3, 2, 4}, aints {},
 *                      types {MPI_INT} }
 *
 * The record holds a reference on each derived type among the arguments,
 * so they outlive a user's MPI_Type_free for as long as the record does.
 * MPI_Type_get_contents returns predefined types as they are and derived
 * ones as new handles (the standard's "new datatype objects" the caller
 * frees): a clone sharing the engine type and carrying the same record,
 * so that a program decoding a type tree recursively sees the same
 * combiners all the way down, as with Open MPI. Predefined types, the
 * MAXLOC/MINLOC pairs included, are MPI_COMBINER_NAMED.
 */
#include "dtype_int.h"

#include <stdlib.h>

struct mpil_dt_contents {
	int combiner;
	int ni, na, nd;
	int *ints;
	MPI_Aint *aints;
	MPI_Datatype *types;
	/* the three arrays follow, addresses first for their alignment */
};

/* A record with room for @ni integers, @na addresses, @nd datatypes. */
static struct mpil_dt_contents *contents_alloc(int combiner, int ni, int na, int nd)
{
	struct mpil_dt_contents *c;
	size_t sz = sizeof(*c) + (size_t)na * sizeof(MPI_Aint) + (size_t)nd * sizeof(MPI_Datatype) +
		    (size_t)ni * sizeof(int);

	c = malloc(sz);
	if (!c)
		return NULL;
	c->combiner = combiner;
	c->ni = ni;
	c->na = na;
	c->nd = nd;
	c->aints = (MPI_Aint *)(c + 1);
	c->types = (MPI_Datatype *)(c->aints + na);
	c->ints = (int *)(c->types + nd);
	return c;
}

/* Takes the references of @c's types and attaches it to @dt. */
static void contents_attach(MPI_Datatype dt, struct mpil_dt_contents *c)
{
	for (int i = 0; i < c->nd; i++)
		mpil_dt_retain(c->types[i]);
	dt->contents = c;
}

int mpil_dt_contents_set(MPI_Datatype dt, const mpil_dt_args_t *a)
{
	struct mpil_dt_contents *c;
	int ni = 0, k = 0;

	for (int p = 0; p < a->npieces; p++)
		ni += a->pieces[p].n;
	c = contents_alloc(a->combiner, ni, a->na, a->nd);
	if (!c)
		return MPI_ERR_NO_MEM;
	for (int p = 0; p < a->npieces; p++)
		for (int i = 0; i < a->pieces[p].n; i++)
			c->ints[k++] = a->pieces[p].v[i];
	for (int i = 0; i < a->na; i++)
		c->aints[i] = a->aints[i];
	for (int i = 0; i < a->nd; i++)
		c->types[i] = a->types[i];
	contents_attach(dt, c);
	return MPI_SUCCESS;
}

int mpil_dt_contents_copy(MPI_Datatype dst, MPI_Datatype src)
{
	const struct mpil_dt_contents *s = src->contents;
	struct mpil_dt_contents *c;

	if (!s)
		return MPI_SUCCESS;
	c = contents_alloc(s->combiner, s->ni, s->na, s->nd);
	if (!c)
		return MPI_ERR_NO_MEM;
	memcpy(c->ints, s->ints, (size_t)s->ni * sizeof(int));
	memcpy(c->aints, s->aints, (size_t)s->na * sizeof(MPI_Aint));
	memcpy(c->types, s->types, (size_t)s->nd * sizeof(MPI_Datatype));
	contents_attach(dst, c);
	return MPI_SUCCESS;
}

void mpil_dt_contents_free(MPI_Datatype dt, bool release)
{
	struct mpil_dt_contents *c = dt->contents;

	if (!c)
		return;
	dt->contents = NULL;
	if (release)
		for (int i = 0; i < c->nd; i++)
			mpil_dt_release(c->types[i]);
	free(c);
}

/* ---- the queries ---------------------------------------------------------------------- */

static int check_decodable(MPI_Datatype dt, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, dt, fname));
	if (!(dt->flags & MPIL_DTF_PREDEFINED) && !dt->contents)
		return mpil_err(NULL, MPI_ERR_INTERN, fname, "derived datatype without a record");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
			   int *num_datatypes, int *combiner)
{
	static const char F[] = "MPI_Type_get_envelope";
	MPIL_CS_GUARD();
	const struct mpil_dt_contents *c;

	MPIL_CHECK(check_decodable(datatype, F));
	if (!num_integers || !num_addresses || !num_datatypes || !combiner)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				!num_integers	 ? "num_integers"
				: !num_addresses ? "num_addresses"
				: !num_datatypes ? "num_datatypes"
						 : "combiner");
	c = datatype->contents;
	*num_integers = c ? c->ni : 0;
	*num_addresses = c ? c->na : 0;
	*num_datatypes = c ? c->nd : 0;
	*combiner = c ? c->combiner : MPI_COMBINER_NAMED;
	return MPI_SUCCESS;
}

/* An output array of @max entries that must take @n. */
static int check_room(int max, int n, const void *arr, const char *what, const char *fname)
{
	if (max < n)
		return mpil_err(NULL, MPI_ERR_ARG, fname,
				"max_%s is %d, the datatype has %d (see MPI_Type_get_envelope)",
				what, max, n);
	if (n > 0 && !arr)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "array_of_%s is NULL", what);
	return MPI_SUCCESS;
}

/* The datatype arguments as the caller gets them: predefined ones as
 * they are, derived ones as new handles (all undone on failure). */
static int contents_types(const struct mpil_dt_contents *c, MPI_Datatype *out, const char *fname)
{
	for (int i = 0; i < c->nd; i++) {
		MPI_Datatype t = c->types[i];
		int err;

		if (t->flags & MPIL_DTF_PREDEFINED) {
			out[i] = t;
			continue;
		}
		err = mpil_dt_clone(t, &out[i]);
		if (err != MPI_SUCCESS) {
			while (i-- > 0)
				if (!(out[i]->flags & MPIL_DTF_PREDEFINED))
					mpil_dt_release(out[i]);
			return mpil_err(NULL, err, fname, "no memory for a datatype handle");
		}
	}
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
			   int max_datatypes, int array_of_integers[],
			   MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
	static const char F[] = "MPI_Type_get_contents";
	MPIL_CS_GUARD();
	const struct mpil_dt_contents *c;

	MPIL_CHECK(check_decodable(datatype, F));
	c = datatype->contents;
	if (!c)
		return mpil_err(NULL, MPI_ERR_TYPE, F,
				"%s is predefined (MPI_COMBINER_NAMED): it has no contents",
				datatype->name);
	MPIL_CHECK(check_room(max_integers, c->ni, array_of_integers, "integers", F));
	MPIL_CHECK(check_room(max_addresses, c->na, array_of_addresses, "addresses", F));
	MPIL_CHECK(check_room(max_datatypes, c->nd, array_of_datatypes, "datatypes", F));
	MPIL_CHECK(contents_types(c, array_of_datatypes, F));
	if (c->ni > 0)
		memcpy(array_of_integers, c->ints, (size_t)c->ni * sizeof(int));
	if (c->na > 0)
		memcpy(array_of_addresses, c->aints, (size_t)c->na * sizeof(MPI_Aint));
	return MPI_SUCCESS;
}
