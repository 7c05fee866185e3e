/*
 * coll.c — the collectives every program needs: MPI_Barrier, MPI_Bcast,
 * MPI_Allreduce. They run on the communicator's collective context
 * (cid | 1), so they never match user point-to-point messages, and are
 * correct for any size, powers of two or not.
 *
 * Barrier: dissemination (Hensgen, Finkel, Manber). Round k: send to
 * rank + 2^k, receive from rank - 2^k; ceil(log2 p) rounds.
 *
 * Bcast, short: binomial tree from the root (ranks relative to the root):
 *
 *     0 ──► 4 ──► 6 ──► 7         a rank receives once from its parent
 *     │     └───► 5                (vr - lowest set bit of vr), then sends
 *     ├───► 2 ──► 3                to vr + 2^j for each 2^j below that bit
 *     └───► 1
 *
 * Bcast, long (van de Geijn): the message is cut into p chunks, scattered
 * down the same binomial tree (each rank gets the chunks of its subtree),
 * then a ring allgather passes every chunk around; the root only sends, so
 * its buffer is never written.
 *
 * Allreduce, short (or a non-commutative op): recursive doubling. With
 * p' = the largest power of two <= p and r = p - p', the first 2r ranks
 * fold pairwise (even into odd) so p' ranks exchange-and-reduce in log2 p'
 * rounds; the folded-out ranks get the result back at the end. Operands
 * are combined lower rank first, which keeps non-commutative ops right.
 *
 * Allreduce, long: ring reduce-scatter (p-1 steps, each rank ends owning the
 * full reduction of one segment), then ring allgather (p-1 steps). Every
 * segment is reduced by exactly one rank, so all ranks get identical bits.
 */
#include "mpil_int.h"

#include <stdlib.h>

/* Steps of the algorithms: tags on the collective context. */
enum {
	TAG_BARRIER = 1,
	TAG_BCAST,
	TAG_BCAST_RING,
	TAG_ALLRED_FOLD,
	TAG_ALLRED_RD,
	TAG_ALLRED_UNFOLD,
	TAG_ALLRED_RS,
	TAG_ALLRED_AG,
};

/* Messages up to this size are broadcast down the binomial tree whole. */
#define BCAST_SHORT_MAX (64 * 1024)
/* Allreduce of up to this many bytes uses recursive doubling. */
#define ALLREDUCE_SHORT_MAX (16 * 1024)
/* Operand space on the stack for short allreduces. */
#define ALLREDUCE_STACK_BUF 512

/* ---- byte transfers on the collective context ------------------------------------ */

static inline ibx_tag_t coll_tag(MPI_Comm comm, int tag)
{
	return mpil_tag(mpil_coll_cid(comm), tag);
}

int mpil_coll_send(MPI_Comm comm, const void *buf, size_t len, int dest, int tag)
{
	return mpil_err_from_ibx(
		mpil_ibx_send(mpil_comm_to_world(comm, dest), buf, len, coll_tag(comm, tag), 0));
}

int mpil_coll_recv(MPI_Comm comm, void *buf, size_t len, int src, int tag)
{
	ibx_request_t rq = { .cb = NULL };
	ibx_status_t st;

	st = ibx_tag_recv(mpil_g.ctx, mpil_comm_to_world(comm, src), buf, len, coll_tag(comm, tag),
			  MPIL_MASK_TAG, &rq);
	if (st >= 0)
		st = mpil_ibx_wait(&rq);
	return mpil_err_from_ibx(st);
}

int mpil_coll_sendrecv(MPI_Comm comm, const void *sbuf, size_t slen, int dest, void *rbuf,
		       size_t rlen, int src, int tag)
{
	ibx_request_t rrq = { .cb = NULL };
	ibx_status_t st, rst;

	rst = ibx_tag_recv(mpil_g.ctx, mpil_comm_to_world(comm, src), rbuf, rlen,
			   coll_tag(comm, tag), MPIL_MASK_TAG, &rrq);
	if (rst < 0)
		return mpil_err_from_ibx(rst);
	st = mpil_ibx_send(mpil_comm_to_world(comm, dest), sbuf, slen, coll_tag(comm, tag), 0);
	if (st != IBX_OK) {
		/* Withdraw the receive; if it already matched, let it land. */
		if (ibx_request_cancel(mpil_g.ctx, &rrq) != IBX_OK)
			mpil_ibx_wait(&rrq);
		return mpil_err_from_ibx(st);
	}
	return mpil_err_from_ibx(mpil_ibx_wait(&rrq));
}

/* ---- barrier ---------------------------------------------------------------------- */

int mpil_barrier(MPI_Comm comm)
{
	int n = comm->size, r = comm->rank;

	for (int k = 1; k < n; k <<= 1) {
		int err = mpil_coll_sendrecv(comm, NULL, 0, (r + k) % n, NULL, 0, (r - k + n) % n,
					     TAG_BARRIER);
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

/* ---- broadcast ---------------------------------------------------------------------- */

static inline int real_rank(int vr, int root, int n)
{
	return (vr + root) % n;
}

static int bcast_binomial(char *buf, size_t len, int root, MPI_Comm comm)
{
	int n = comm->size, vr = (comm->rank - root + n) % n, mask = 1, err;

	while (mask < n) {
		if (vr & mask) {
			err = mpil_coll_recv(comm, buf, len, real_rank(vr - mask, root, n),
					     TAG_BCAST);
			if (err != MPI_SUCCESS)
				return err;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < n) {
			err = mpil_coll_send(comm, buf, len, real_rank(vr + mask, root, n),
					     TAG_BCAST);
			if (err != MPI_SUCCESS)
				return err;
		}
	}
	return MPI_SUCCESS;
}

/* Offset of chunk @i of @n equal chunks of @len bytes (the last ones may be
 * short or empty). */
static inline size_t chunk_off(size_t len, int n, int i)
{
	size_t c = (len + (size_t)n - 1) / (size_t)n, off = c * (size_t)i;

	return off < len ? off : len;
}

static int bcast_scatter_ring(char *buf, size_t len, int root, MPI_Comm comm)
{
	int n = comm->size, vr = (comm->rank - root + n) % n, mask = 1, err;

	/* Scatter: a subtree rooted at vr (size mask) gets chunks [vr, vr+mask). */
	while (mask < n) {
		if (vr & mask) {
			int hi = vr + mask < n ? vr + mask : n;
			size_t a = chunk_off(len, n, vr), b = chunk_off(len, n, hi);

			err = mpil_coll_recv(comm, buf + a, b - a, real_rank(vr - mask, root, n),
					     TAG_BCAST);
			if (err != MPI_SUCCESS)
				return err;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < n) {
			int hi = vr + 2 * mask < n ? vr + 2 * mask : n;
			size_t a = chunk_off(len, n, vr + mask), b = chunk_off(len, n, hi);

			err = mpil_coll_send(comm, buf + a, b - a, real_rank(vr + mask, root, n),
					     TAG_BCAST);
			if (err != MPI_SUCCESS)
				return err;
		}
	}
	/* Ring allgather: at step i, pass chunk vr - i right, take chunk
	 * vr - i - 1 from the left. The root has everything and never
	 * receives, so its left neighbour never sends to it. */
	int left = (vr - 1 + n) % n, right = (vr + 1) % n;

	for (int i = 0; i < n - 1; i++) {
		int sc = (vr - i + n) % n, rc = (vr - i - 1 + n) % n;
		size_t sa = chunk_off(len, n, sc), sb = chunk_off(len, n, sc + 1);
		size_t ra = chunk_off(len, n, rc), rb = chunk_off(len, n, rc + 1);

		if (vr == 0)
			err = mpil_coll_send(comm, buf + sa, sb - sa, real_rank(right, root, n),
					     TAG_BCAST_RING);
		else if (right == 0)
			err = mpil_coll_recv(comm, buf + ra, rb - ra, real_rank(left, root, n),
					     TAG_BCAST_RING);
		else
			err = mpil_coll_sendrecv(comm, buf + sa, sb - sa, real_rank(right, root, n),
						 buf + ra, rb - ra, real_rank(left, root, n),
						 TAG_BCAST_RING);
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

int mpil_bcast_bytes(void *buf, size_t len, int root, MPI_Comm comm)
{
	if (comm->size == 1 || len == 0)
		return MPI_SUCCESS;
	if (len <= BCAST_SHORT_MAX || len < (size_t)comm->size)
		return bcast_binomial(buf, len, root, comm);
	return bcast_scatter_ring(buf, len, root, comm);
}

/* ---- allreduce --------------------------------------------------------------------- */

static int allreduce_recursive_doubling(char *acc, char *tmp, int count, MPI_Datatype dt,
					MPI_Op op, MPI_Comm comm)
{
	int n = comm->size, r = comm->rank, pof2 = 1, rem, newrank, err;
	size_t bytes = (size_t)count * (size_t)dt->extent;

	while (pof2 * 2 <= n)
		pof2 *= 2;
	rem = n - pof2;
	/* Fold: among the first 2*rem ranks, even ones hand their operand to
	 * the next odd one and sit out the exchange. */
	if (r < 2 * rem) {
		if (r % 2 == 0) {
			err = mpil_coll_send(comm, acc, bytes, r + 1, TAG_ALLRED_FOLD);
			newrank = -1;
		} else {
			err = mpil_coll_recv(comm, tmp, bytes, r - 1, TAG_ALLRED_FOLD);
			if (err == MPI_SUCCESS)
				mpil_op_apply(op, tmp, acc, count, dt); /* (r-1) op r */
			newrank = r / 2;
		}
		if (err != MPI_SUCCESS)
			return err;
	} else {
		newrank = r - rem;
	}
	if (newrank >= 0) {
		for (int mask = 1; mask < pof2; mask <<= 1) {
			int newdst = newrank ^ mask;
			int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;

			err = mpil_coll_sendrecv(comm, acc, bytes, dst, tmp, bytes, dst,
						 TAG_ALLRED_RD);
			if (err != MPI_SUCCESS)
				return err;
			if (dst < r) {
				mpil_op_apply(op, tmp, acc, count, dt); /* theirs op mine */
			} else {
				mpil_op_apply(op, acc, tmp, count, dt); /* mine op theirs */
				memcpy(acc, tmp, bytes);
			}
		}
	}
	if (r < 2 * rem) {
		if (r % 2 == 0)
			return mpil_coll_recv(comm, acc, bytes, r + 1, TAG_ALLRED_UNFOLD);
		return mpil_coll_send(comm, acc, bytes, r - 1, TAG_ALLRED_UNFOLD);
	}
	return MPI_SUCCESS;
}

/* First element of segment @i when @count elements are split in @n. */
static inline int seg_start(int count, int n, int i)
{
	return (int)((long long)count * i / n);
}

static int allreduce_ring(char *acc, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
			  MPI_Comm comm)
{
	int n = comm->size, r = comm->rank, left = (r - 1 + n) % n, right = (r + 1) % n, err;
	size_t ext = (size_t)dt->extent;

	/* Reduce-scatter: after step s, segment r - s - 1 holds s + 2
	 * operands; rank r ends with segment r + 1 complete. */
	for (int s = 0; s < n - 1; s++) {
		int sseg = (r - s + n) % n, rseg = (r - s - 1 + n) % n;
		int s0 = seg_start(count, n, sseg), s1 = seg_start(count, n, sseg + 1);
		int r0 = seg_start(count, n, rseg), r1 = seg_start(count, n, rseg + 1);

		err = mpil_coll_sendrecv(comm, acc + (size_t)s0 * ext, (size_t)(s1 - s0) * ext,
					 right, tmp, (size_t)(r1 - r0) * ext, left, TAG_ALLRED_RS);
		if (err != MPI_SUCCESS)
			return err;
		mpil_op_apply(op, tmp, acc + (size_t)r0 * ext, r1 - r0, dt);
	}
	/* Allgather the complete segments around the ring. */
	for (int s = 0; s < n - 1; s++) {
		int sseg = (r + 1 - s + n) % n, rseg = (r - s + n) % n;
		int s0 = seg_start(count, n, sseg), s1 = seg_start(count, n, sseg + 1);
		int r0 = seg_start(count, n, rseg), r1 = seg_start(count, n, rseg + 1);

		err = mpil_coll_sendrecv(comm, acc + (size_t)s0 * ext, (size_t)(s1 - s0) * ext,
					 right, acc + (size_t)r0 * ext, (size_t)(r1 - r0) * ext,
					 left, TAG_ALLRED_AG);
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

int mpil_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
		   MPI_Comm comm)
{
	/* Reductions work on predefined types: the elements are extent apart
	 * and their bytes (padding included) move as they are. */
	size_t bytes = (size_t)count * (size_t)dt->extent;
	bool ring = op->commutative && bytes > ALLREDUCE_SHORT_MAX && count >= comm->size;
	size_t tmp_len = ring ? ((size_t)count / (size_t)comm->size + 1) * (size_t)dt->extent : bytes;
	char stack_buf[ALLREDUCE_STACK_BUF];
	char *tmp = stack_buf;
	int err;

	if (count == 0)
		return MPI_SUCCESS;
	if (sendbuf != MPI_IN_PLACE)
		memcpy(recvbuf, sendbuf, bytes);
	if (comm->size == 1)
		return MPI_SUCCESS;
	if (tmp_len > sizeof(stack_buf)) {
		tmp = malloc(tmp_len);
		if (!tmp)
			return MPI_ERR_NO_MEM;
	}
	if (ring)
		err = allreduce_ring(recvbuf, tmp, count, dt, op, comm);
	else
		err = allreduce_recursive_doubling(recvbuf, tmp, count, dt, op, comm);
	if (tmp != stack_buf)
		free(tmp);
	return err;
}

/* ---- the MPI functions -------------------------------------------------------------- */

static int coll_failed(MPI_Comm comm, int err, const char *fname)
{
	return mpil_err(comm, err, fname, "a transfer between members of %s failed",
			comm->name[0] ? comm->name : "the communicator");
}

MPIL_PMPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
	static const char F[] = "MPI_Barrier";
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	err = mpil_barrier(comm);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Bcast";
	size_t len;
	void *tmp = NULL;
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(mpil_check_dtype(comm, datatype, F));
	MPIL_CHECK(mpil_check_buf(comm, buffer, count, datatype, F));
	if (ibx_unlikely(root < 0 || root >= comm->size))
		return mpil_err(comm, MPI_ERR_ROOT, F, "invalid root %d (communicator size %d)",
				root, comm->size);
	len = (size_t)count * datatype->size;
	if (comm->size == 1 || len == 0)
		return MPI_SUCCESS;
	if (mpil_dt_contig(datatype)) {
		char *data = (char *)buffer + datatype->true_lb;

		err = mpil_bcast_bytes(data, len, root, comm);
	} else {
		tmp = malloc(len);
		if (!tmp)
			return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory to pack %zu bytes", len);
		if (comm->rank == root)
			mpil_dt_pack(datatype, buffer, count, tmp);
		err = mpil_bcast_bytes(tmp, len, root, comm);
		if (err == MPI_SUCCESS && comm->rank != root)
			mpil_dt_unpack(datatype, tmp, len, buffer);
		free(tmp);
	}
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		   MPI_Op op, MPI_Comm comm)
{
	static const char F[] = "MPI_Allreduce";
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(mpil_check_dtype(comm, datatype, F));
	MPIL_CHECK(mpil_check_op(comm, op, datatype, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
	if (sendbuf != MPI_IN_PLACE)
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
	if (ibx_unlikely(count > 0 && sendbuf == recvbuf && datatype->size > 0))
		return mpil_err(comm, MPI_ERR_BUFFER, F,
				"sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
	err = mpil_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}
