/*
 * coll_node.c — the node map of the collectives: which node every world
 * rank runs on, whether a communicator spans nodes, its split into node
 * members and node representatives for the node-aware algorithms, and the
 * properties of where a group runs that the selection table reads
 * (coll_select.h). MPI_Init builds the map and, on rank 0, logs the table.
 *
 * Built once in MPI_Init when the job spans several nodes: every process
 * knows its own node's members (ibx_local_ranks), so one allgather of
 * "my node's lowest world rank" gives every process the node of every
 * rank. The split of a communicator is then computed locally, identically
 * on all its members, in O(size) per collective (no allocation). The same
 * allgather tells everyone whether any node runs more ranks than it has
 * CPUs, which some algorithm choices depend on (they must agree job-wide).
 */
#include "coll_int.h"

#include <unistd.h>

static struct {
	bool multi;	    /* node-aware algorithms on: the world spans nodes */
	bool oversub;	    /* some node has more ranks than CPUs */
	int *node;	    /* [world size]: node id = the node's lowest world rank */
	int *stamp, *idx;   /* [world size] scratch, by node id */
	int *intra, *inter; /* [world size] scratch: the groups of mpil_coll_hier_get */
	int gen;
} nm;

static int node_map_build(void)
{
	const mpil_config_t *cfg = mpil_config();
	int ws = mpil_g.world_size, me = mpil_g.world_rank, err = MPI_SUCCESS;
	int nlocal = ibx_local_size(mpil_g.ctx), *info = NULL;
	int64_t fake = cfg->COLL_NODE_SIZE;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	bool spread, hier;

	memset(&nm, 0, sizeof(nm));
	nm.oversub = ncpu > 0 && nlocal > ncpu;
	if (ws == 1)
		return MPI_SUCCESS;
	spread = nlocal < ws;
	hier = cfg->COLL_HIER && (fake > 0 ? ws > fake : spread);
	if (spread) {
		/* {node's lowest world rank, oversubscribed} from everyone */
		coll_grp_t g;
		coll_lay_t lay = {.stride = 2 * sizeof(int), .len = 2 * sizeof(int)};

		info = malloc(2 * (size_t)ws * sizeof(int));
		if (!info)
			return MPI_ERR_NO_MEM;
		info[2 * me] = ibx_local_ranks(mpil_g.ctx)[0];
		info[2 * me + 1] = nm.oversub;
		lay.base = (char *)info;
		coll_grp_comm(&g, MPI_COMM_WORLD);
		err = mpil_coll_allgather_ring(&g, &lay);
		for (int w = 0; err == MPI_SUCCESS && w < ws; w++)
			nm.oversub |= info[2 * w + 1] != 0;
	}
	if (err == MPI_SUCCESS && hier) {
		nm.node = malloc(5 * (size_t)ws * sizeof(int));
		if (!nm.node)
			err = MPI_ERR_NO_MEM;
	}
	if (err != MPI_SUCCESS || !hier) {
		free(info);
		if (err != MPI_SUCCESS)
			mpil_coll_fini();
		return err;
	}
	nm.stamp = nm.node + ws;
	nm.idx = nm.stamp + ws;
	nm.intra = nm.idx + ws;
	nm.inter = nm.intra + ws;
	for (int w = 0; w < ws; w++) {
		nm.stamp[w] = 0;
		nm.node[w] = fake > 0 ? (int)(w / fake * fake) : info[2 * w];
	}
	free(info);
	nm.multi = true;
	return MPI_SUCCESS;
}

/* What MPI_COMM_WORLD's collectives will run, once, for IBX_LOG=info. */
static void log_selection(void)
{
	coll_grp_t g;

	coll_grp_comm(&g, MPI_COMM_WORLD);
	mpil_coll_select_log(g.size, mpil_coll_where(&g));
}

int mpil_coll_init(void)
{
	int err = node_map_build();

	if (err == MPI_SUCCESS && mpil_g.world_rank == 0)
		log_selection();
	return err;
}

void mpil_coll_fini(void)
{
	free(nm.node);
	memset(&nm, 0, sizeof(nm));
}

static inline int node_of(MPI_Comm comm, int r)
{
	return nm.node[mpil_comm_to_world(comm, r)];
}

/* Does @comm span more than one node (with node-aware algorithms on)? */
static bool spans_nodes(MPI_Comm comm)
{
	int mine;

	if (!nm.multi || comm->size == 1)
		return false;
	if (!comm->rank_to_world)
		return comm->size == mpil_g.world_size;
	mine = node_of(comm, comm->rank);
	for (int r = 0; r < comm->size; r++)
		if (node_of(comm, r) != mine)
			return true;
	return false;
}

unsigned mpil_coll_where(const coll_grp_t *g)
{
	unsigned props = nm.oversub ? MPIL_COLL_OVERSUB : 0;

	if (g->ranks) /* a subgroup: where its members run is not known here */
		return props;
	return props | (spans_nodes(g->comm) ? MPIL_COLL_SPANS_NODES : MPIL_COLL_ONE_NODE);
}

void mpil_coll_hier_get(MPI_Comm comm, int root, coll_hier_t *h)
{
	int p = comm->size, me = comm->rank, mykey = node_of(comm, me);
	int nintra = 0, ninter = 0, myidx = 0, rep;

	if (++nm.gen == 0) { /* wrapped: forget every stamp */
		for (int w = 0; w < mpil_g.world_size; w++)
			nm.stamp[w] = 0;
		nm.gen = 1;
	}
	for (int r = 0; r < p; r++) {
		int key = node_of(comm, r);

		if (key == mykey) {
			if (r == me)
				myidx = nintra;
			nm.intra[nintra++] = r;
		}
		if (nm.stamp[key] != nm.gen) { /* the node's lowest rank */
			nm.stamp[key] = nm.gen;
			nm.idx[key] = ninter;
			nm.inter[ninter++] = r;
		}
	}
	h->inter_root = nm.idx[node_of(comm, root)];
	nm.inter[h->inter_root] = root;
	rep = nm.inter[nm.idx[mykey]];
	h->is_rep = rep == me;
	h->intra = (coll_grp_t){.comm = comm, .size = nintra, .rank = myidx, .ranks = nm.intra};
	h->inter =
	    (coll_grp_t){.comm = comm, .size = ninter, .rank = nm.idx[mykey], .ranks = nm.inter};
	h->intra_root = 0;
	for (int i = 0; i < nintra; i++)
		if (nm.intra[i] == rep)
			h->intra_root = i;
}
