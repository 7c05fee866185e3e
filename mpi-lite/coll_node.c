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
 * rank. The same allgather tells everyone whether any node runs more ranks
 * than it has CPUs, which some algorithm choices depend on (they must
 * agree job-wide).
 *
 * The split of a communicator is computed locally, identically on all its
 * members, on its first node-aware collective and cached with it
 * (comm->coll_split, freed with the communicator):
 *
 *   comm ranks   0 1 2 3 4 5        node of each: A A B B C C
 *   intra        {2,3}              (on rank 2 or 3: my node's members)
 *   low          {0,2,4}            one per node, its lowest rank
 *   node_idx     0 0 1 1 2 2        each rank's node's index in low
 *
 * A rooted collective puts the root in place of its node's lowest rank
 * (inter = low with one entry patched, undone by the next call). Nothing
 * is shared between communicators, so threads running collectives on
 * different communicators (MPI_THREAD_MULTIPLE: a blocked collective lets
 * another thread in) never see each other's groups; collectives on one
 * communicator are ordered by the MPI rules, so its cache needs no lock.
 */
#include "coll_int.h"

#include <unistd.h>

static struct {
	bool multi;   /* node-aware algorithms on: the world spans nodes */
	bool oversub; /* some node has more ranks than CPUs */
	int *node;    /* [world size]: node id = the node's lowest world rank */
} nm;

/* A communicator's split by nodes (see the header comment). */
typedef struct coll_split {
	int nintra;    /* my node's members */
	int ninter;    /* nodes */
	int myidx;     /* my index in intra */
	int mynode;    /* my node's index in low */
	int patched;   /* the entry of inter holding a root, or -1 */
	int *intra;    /* [nintra] ascending */
	int *low;      /* [ninter] each node's lowest rank, by first appearance */
	int *inter;    /* [ninter] low, with the last root patched in */
	int *node_idx; /* [comm size] */
} coll_split_t;

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
		nm.node = malloc((size_t)ws * sizeof(int));
		if (!nm.node)
			err = MPI_ERR_NO_MEM;
	}
	if (err != MPI_SUCCESS || !hier) {
		free(info);
		if (err != MPI_SUCCESS)
			mpil_coll_fini();
		return err;
	}
	for (int w = 0; w < ws; w++)
		nm.node[w] = fake > 0 ? (int)(w / fake * fake) : info[2 * w];
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
	mpil_coll_split_free(MPI_COMM_WORLD);
	mpil_coll_split_free(MPI_COMM_SELF);
	free(nm.node);
	memset(&nm, 0, sizeof(nm));
}

static inline int node_of(MPI_Comm comm, int r)
{
	return nm.node[mpil_comm_to_world(comm, r)];
}

void mpil_coll_split_free(MPI_Comm c)
{
	coll_split_t *sp = c->coll_split;

	if (sp) {
		free(sp->intra);
		free(sp);
	}
	c->coll_split = NULL;
}

/* Builds and caches @comm's split; @seen[node id] is the node's index in
 * low + 1 once the node has appeared. */
static coll_split_t *split_build(MPI_Comm comm)
{
	int p = comm->size, ws = mpil_g.world_size, mykey = node_of(comm, comm->rank);
	coll_split_t *sp = calloc(1, sizeof(*sp));
	int *seen = calloc((size_t)ws, sizeof(int));

	/* one block: intra[p] low[p] inter[p] node_idx[p] (at most p each) */
	if (sp)
		sp->intra = malloc(4 * (size_t)p * sizeof(int));
	if (!sp || !seen || !sp->intra) {
		if (sp)
			free(sp->intra);
		free(sp);
		free(seen);
		return NULL;
	}
	sp->low = sp->intra + p;
	sp->inter = sp->low + p;
	sp->node_idx = sp->inter + p;
	sp->patched = -1;
	for (int r = 0; r < p; r++) {
		int key = node_of(comm, r);

		if (key == mykey) {
			if (r == comm->rank)
				sp->myidx = sp->nintra;
			sp->intra[sp->nintra++] = r;
		}
		if (!seen[key]) { /* the node's lowest rank */
			seen[key] = sp->ninter + 1;
			sp->low[sp->ninter] = sp->inter[sp->ninter] = r;
			sp->ninter++;
		}
		sp->node_idx[r] = seen[key] - 1;
	}
	free(seen);
	sp->mynode = sp->node_idx[comm->rank];
	comm->coll_split = sp;
	return sp;
}

/* @comm's split, built on first use; NULL when out of memory. */
static coll_split_t *split_get(MPI_Comm comm)
{
	return comm->coll_split ? comm->coll_split : split_build(comm);
}

/* Does @comm span more than one node (with node-aware algorithms on)? */
static bool spans_nodes(MPI_Comm comm)
{
	int mine;
	coll_split_t *sp;

	if (!nm.multi || comm->size == 1)
		return false;
	if (!comm->rank_to_world && comm->size == mpil_g.world_size)
		return true;
	sp = comm->coll_split;
	if (sp)
		return sp->ninter > 1;
	/* without the cache (not yet built, or no memory for it): the same
	 * answer, computed directly */
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

/* @r's index in the ascending @a[0..n), or 0 when absent. */
static int index_of(const int *a, int n, int r)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (a[mid] == r)
			return mid;
		if (a[mid] < r)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

int mpil_coll_hier_get(MPI_Comm comm, int root, coll_hier_t *h)
{
	coll_split_t *sp = split_get(comm);
	int rootnode;

	if (!sp)
		return MPI_ERR_NO_MEM;
	rootnode = sp->node_idx[root];
	if (sp->patched >= 0) /* undo the previous root */
		sp->inter[sp->patched] = sp->low[sp->patched];
	sp->inter[rootnode] = root;
	sp->patched = rootnode;
	h->inter_root = rootnode;
	h->is_rep = sp->inter[sp->mynode] == comm->rank;
	h->intra =
	    (coll_grp_t){.comm = comm, .size = sp->nintra, .rank = sp->myidx, .ranks = sp->intra};
	h->inter =
	    (coll_grp_t){.comm = comm, .size = sp->ninter, .rank = sp->mynode, .ranks = sp->inter};
	/* my representative: the root on the root's node, else the lowest */
	h->intra_root = rootnode == sp->mynode ? index_of(sp->intra, sp->nintra, root) : 0;
	return MPI_SUCCESS;
}
