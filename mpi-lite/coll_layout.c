/*
 * coll_layout.c — typed user buffers as the bytes the algorithms move: a
 * contiguous type in place, any other packed into a temporary through
 * mpil_dt_pack (and unpacked from one after the transfer), one buffer at
 * a time or as the p blocks of the gather family (regular: p blocks of one
 * count; v: counts and displacements).
 */
#include "coll_int.h"

/* Where nothing is moved (zero bytes) a pointer is still needed. */
static char coll_nothing[1];

/* The bytes of @count elements at @buf: in place for a contiguous type,
 * else packed into *tmp_p (to free). NULL when out of memory. */
char *mpil_coll_tb_read(const void *buf, int count, MPI_Datatype dt, void **tmp_p)
{
	size_t len = coll_tbytes(count, dt);

	*tmp_p = NULL;
	if (len == 0)
		return coll_nothing;
	if (mpil_dt_contig(dt))
		return coll_at(buf, dt->true_lb);
	*tmp_p = malloc(len);
	if (*tmp_p)
		mpil_dt_pack(dt, buf, count, *tmp_p);
	return *tmp_p;
}

/* Where to receive @count elements for @buf: in place for a contiguous
 * type, else a temporary that mpil_coll_tb_write_done() unpacks. */
char *mpil_coll_tb_write(void *buf, int count, MPI_Datatype dt, void **tmp_p)
{
	size_t len = coll_tbytes(count, dt);

	*tmp_p = NULL;
	if (len == 0)
		return coll_nothing;
	if (mpil_dt_contig(dt))
		return coll_at(buf, dt->true_lb);
	*tmp_p = malloc(len);
	return *tmp_p;
}

void mpil_coll_tb_write_done(void *buf, int count, MPI_Datatype dt, void *tmp)
{
	if (tmp) {
		mpil_dt_unpack(dt, tmp, coll_tbytes(count, dt), buf);
		free(tmp);
	}
}

/* A regular layout of p blocks of @count elements at @buf: in place for a
 * contiguous type (*tmp_p NULL), else a packed temporary of p blocks
 * (filled with the user's blocks when @fill; block @skip excepted, -1 for
 * none). Returns MPI_ERR_NO_MEM or MPI_SUCCESS. */
int mpil_coll_lay_regular(coll_lay_t *l, const void *buf, int count, MPI_Datatype dt, int p,
			  bool fill, int skip, void **tmp_p)
{
	size_t len = coll_tbytes(count, dt);

	*tmp_p = NULL;
	l->off = NULL;
	l->lens = NULL;
	l->len = l->stride = len;
	if (len == 0) {
		l->base = coll_nothing;
		return MPI_SUCCESS;
	}
	if (mpil_dt_contig(dt)) {
		l->base = coll_at(buf, dt->true_lb);
		return MPI_SUCCESS;
	}
	*tmp_p = malloc((size_t)p * len);
	if (!*tmp_p)
		return MPI_ERR_NO_MEM;
	l->base = *tmp_p;
	if (fill)
		for (int i = 0; i < p; i++)
			if (i != skip)
				mpil_dt_pack(dt, coll_block_at(buf, i, count, dt), count,
					     l->base + (size_t)i * len);
	return MPI_SUCCESS;
}

/* Unpacks the blocks of a packed regular layout into the user buffer. */
void mpil_coll_lay_regular_done(const coll_lay_t *l, void *buf, int count, MPI_Datatype dt, int p,
				int skip, void *tmp)
{
	if (!tmp)
		return;
	for (int i = 0; i < p; i++)
		if (i != skip)
			mpil_dt_unpack(dt, l->base + (size_t)i * l->len, l->len,
				       coll_block_at(buf, i, count, dt));
	free(tmp);
}

/* A v layout: block i is counts[i] elements at displs[i] * extent. In
 * place for a contiguous type, else packed back to back in a temporary
 * (filled when @fill, block @skip excepted). *mem_p holds the offset and
 * length arrays (and the temporary): free it. */
int mpil_coll_lay_v(coll_lay_t *l, const void *buf, const int *counts, const int *displs,
		    MPI_Datatype dt, int p, bool fill, int skip, void **mem_p)
{
	bool contig = mpil_dt_contig(dt);
	size_t total = 0, arrays = (size_t)p * (sizeof(ptrdiff_t) + sizeof(size_t));
	ptrdiff_t *off;
	size_t *lens;
	char *mem;

	for (int i = 0; i < p; i++)
		total += coll_tbytes(counts[i], dt);
	mem = malloc(arrays + (contig ? 0 : total) + 1);
	*mem_p = mem;
	if (!mem)
		return MPI_ERR_NO_MEM;
	off = (ptrdiff_t *)mem;
	lens = (size_t *)(off + p);
	l->off = off;
	l->lens = lens;
	l->stride = l->len = 0;
	if (contig) {
		l->base = coll_at(buf, dt->true_lb);
		for (int i = 0; i < p; i++) {
			off[i] = (ptrdiff_t)displs[i] * dt->extent;
			lens[i] = coll_tbytes(counts[i], dt);
		}
		return MPI_SUCCESS;
	}
	l->base = mem + arrays;
	total = 0;
	for (int i = 0; i < p; i++) {
		off[i] = (ptrdiff_t)total;
		lens[i] = coll_tbytes(counts[i], dt);
		if (fill && i != skip && lens[i])
			mpil_dt_pack(dt, coll_at(buf, (MPI_Aint)displs[i] * dt->extent), counts[i],
				     l->base + total);
		total += lens[i];
	}
	return MPI_SUCCESS;
}

void mpil_coll_lay_v_done(const coll_lay_t *l, void *buf, const int *counts, const int *displs,
			  MPI_Datatype dt, int p, int skip)
{
	if (mpil_dt_contig(dt))
		return;
	for (int i = 0; i < p; i++)
		if (i != skip && l->lens[i])
			mpil_dt_unpack(dt, l->base + l->off[i], l->lens[i],
				       coll_at(buf, (MPI_Aint)displs[i] * dt->extent));
}

int mpil_coll_lay_regular_copy(coll_lay_t *l, const void *buf, int count, MPI_Datatype dt, int p,
			       void **tmp_p)
{
	size_t len = coll_tbytes(count, dt);

	if (!mpil_dt_contig(dt))
		return mpil_coll_lay_regular(l, buf, count, dt, p, true, -1, tmp_p);
	*tmp_p = malloc((size_t)p * len + 1);
	if (!*tmp_p)
		return MPI_ERR_NO_MEM;
	memcpy(*tmp_p, coll_at(buf, dt->true_lb), (size_t)p * len);
	*l = (coll_lay_t){.base = *tmp_p, .stride = len, .len = len};
	return MPI_SUCCESS;
}

int mpil_coll_lay_v_copy(coll_lay_t *l, const void *buf, const int *counts, const int *displs,
			 MPI_Datatype dt, int p, void **mem_p)
{
	size_t arrays = (size_t)p * (sizeof(ptrdiff_t) + sizeof(size_t)), total = 0, o = 0;
	coll_lay_t in;
	void *imem = NULL;
	ptrdiff_t *off;
	size_t *lens;
	char *mem;
	int err;

	*mem_p = NULL;
	if (!mpil_dt_contig(dt))
		return mpil_coll_lay_v(l, buf, counts, displs, dt, p, true, -1, mem_p);
	err = mpil_coll_lay_v(&in, buf, counts, displs, dt, p, false, -1, &imem);
	if (err != MPI_SUCCESS) {
		free(imem);
		return err;
	}
	for (int i = 0; i < p; i++)
		total += lay_len(&in, i);
	mem = malloc(arrays + total + 1);
	*mem_p = mem;
	if (!mem) {
		free(imem);
		return MPI_ERR_NO_MEM;
	}
	off = (ptrdiff_t *)mem;
	lens = (size_t *)(off + p);
	*l = (coll_lay_t){.base = mem + arrays, .off = off, .lens = lens};
	for (int i = 0; i < p; i++) {
		off[i] = (ptrdiff_t)o;
		lens[i] = lay_len(&in, i);
		memcpy(l->base + o, lay_ptr(&in, i), lens[i]);
		o += lens[i];
	}
	free(imem);
	return MPI_SUCCESS;
}
