/*
 * nodes.c — --emulate-nodes N[:DEV0,...,DEV<N-1>], a test feature: the
 * ranks of one job spread over N emulated nodes of this one machine, so
 * that a single host (a VM with two Soft-RoCE devices joined by a veth
 * link) runs a job whose node-local peers use shared memory and the others
 * verbs. What each part does with it:
 *
 *   here       the placement: by block, as Slurm's block distribution
 *              (consecutive ranks per node, the first np % N nodes one rank
 *              more: np=5, N=2 gives {0,1,2} {3,4}); node k's name,
 *              "<short host name>-n<k>" (the host name cut so that the
 *              whole fits HOST_NAME_MAX)
 *   server.c   the PMIx job as a multi-node launcher registers it: node and
 *              proc maps, the node-level keys (PMIX_LOCAL_PEERS, ...) once
 *              per node, each rank's PMIX_NODEID, PMIX_HOSTNAME, local rank
 *   job.c      each rank's environment: PMIX_HOSTNAME=<its node> (libpmix
 *              resolves node-level keys with it), MPILITE_RUN_NODE=k,
 *              IBX_DEVICE=DEVk; in the child before exec, a UTS namespace of
 *              its own named after the node (unshare + sethostname), so that
 *              gethostname() and MPI_Get_processor_name see the node
 *
 * The UTS namespace needs CAP_SYS_ADMIN. Without it the ranks run under the
 * machine's name (one warning): PMIx alone tells ibx which peers share its
 * node. CPU binding stays that of the real machine (bind.c). N=1 without
 * devices is the launcher without the option.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* unshare, CLONE_NEWUTS */
#endif
#include "run_int.h"
#include "ibx_int.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Whether a child may enter a UTS namespace of its own: tried once, in a
 * throwaway child (the launcher's own namespace must stay), so that a
 * launcher without CAP_SYS_ADMIN warns once instead of once per rank.
 * Returns 0 or the errno of unshare. Called before the PMIx thread exists.
 */
static int probe_uts(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUTS) == 0 ? 0 : (errno & 0xff ? errno & 0xff : EPERM));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0; /* cannot tell (SIGCHLD ignored?): the ranks try */
	return WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

/* Node @k's name: the short host name cut so that "-n<k>" fits too. */
static void node_name(const char *host, int k, run_node_t *node)
{
	char suffix[16];
	size_t base = strcspn(host, "."), room;

	snprintf(suffix, sizeof(suffix), "-n%d", k);
	room = RUN_HOST_MAX - strlen(suffix);
	if (base > room)
		base = room;
	snprintf(node->name, sizeof(node->name), "%.*s%s", (int)base, host, suffix);
	node->name_len = strlen(node->name);
}

run_nodes_t *run_nodes_plan(const run_opts_t *opts)
{
	run_nodes_t *nodes = calloc(1, sizeof(*nodes));
	char host[256];
	const char *dev = opts->node_devices;
	int n = opts->nnodes > 0 ? opts->nnodes : 1, err;

	if (!nodes)
		goto err_nomem;
	nodes->nnodes = n;
	nodes->np = opts->np;
	nodes->emulated = n > 1;
	nodes->node = calloc((size_t)n, sizeof(*nodes->node));
	if (!nodes->node)
		goto err_nomem;
	if (gethostname(host, sizeof(host)) < 0) {
		run_msg("gethostname: %s", strerror(errno));
		goto err_free;
	}
	host[sizeof(host) - 1] = '\0';
	if (!host[0])
		snprintf(host, sizeof(host), "localhost");

	for (int k = 0, first = 0; k < n; k++) {
		run_node_t *node = &nodes->node[k];

		node->first = first;
		node->count = opts->np / n + (k < opts->np % n);
		first += node->count;
		if (nodes->emulated) {
			node_name(host, k, node);
		} else {
			snprintf(node->name, sizeof(node->name), "%.*s", RUN_HOST_MAX, host);
			node->name_len = strlen(node->name);
		}
		if (dev) {
			size_t len = strcspn(dev, ",");

			node->device = strndup(dev, len);
			if (!node->device)
				goto err_nomem;
			dev += len + (dev[len] == ',');
		}
	}

	if (nodes->emulated) {
		err = probe_uts();
		nodes->uts = err == 0;
		if (err)
			run_msg(
			    "--emulate-nodes: the ranks cannot have their nodes' host names "
			    "(unshare(CLONE_NEWUTS): %s; it needs CAP_SYS_ADMIN): they run as %s, "
			    "PMIx still tells them their node",
			    strerror(err), host);
	}
	return nodes;

err_nomem:
	run_msg("out of memory");
err_free:
	run_nodes_free(nodes);
	return NULL;
}

void run_nodes_free(run_nodes_t *nodes)
{
	if (!nodes)
		return;
	for (int k = 0; nodes->node && k < nodes->nnodes; k++)
		free(nodes->node[k].device);
	free(nodes->node);
	free(nodes);
}

/* (async-signal-safe: run_nodes_enter uses it in the child) */
int run_nodes_of(const run_nodes_t *nodes, int rank)
{
	int k = 0;

	while (k + 1 < nodes->nnodes && rank >= nodes->node[k + 1].first)
		k++;
	return k;
}

int run_nodes_env(const run_nodes_t *nodes, int rank, char ***env_p)
{
	int k = run_nodes_of(nodes, rank);
	const run_node_t *node = &nodes->node[k];
	char num[16];

	snprintf(num, sizeof(num), "%d", k);
	if (nodes->emulated && run_env_set(env_p, "PMIX_HOSTNAME", node->name) < 0)
		return -1;
	if ((nodes->emulated || node->device) && run_env_set(env_p, "MPILITE_RUN_NODE", num) < 0)
		return -1;
	if (node->device && run_env_set(env_p, "IBX_DEVICE", node->device) < 0)
		return -1;
	return 0;
}

int run_nodes_enter(const run_nodes_t *nodes, int rank)
{
	const run_node_t *node;

	if (!nodes->uts)
		return 0;
	node = &nodes->node[run_nodes_of(nodes, rank)];
	if (unshare(CLONE_NEWUTS) < 0 || sethostname(node->name, node->name_len) < 0)
		return errno;
	return 0;
}

void run_nodes_report(const run_nodes_t *nodes)
{
	if (!nodes->emulated && !nodes->node[0].device)
		return;
	for (int k = 0; k < nodes->nnodes; k++) {
		const run_node_t *node = &nodes->node[k];
		char ranks[32];

		if (node->count == 1)
			snprintf(ranks, sizeof(ranks), "rank %d", node->first);
		else
			snprintf(ranks, sizeof(ranks), "ranks %d-%d", node->first,
				 node->first + node->count - 1);
		run_msg("node %d (%s): %s%s%s", k, node->name, ranks,
			node->device ? ", IBX_DEVICE=" : "", node->device ? node->device : "");
	}
}
