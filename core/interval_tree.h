/*
 * interval_tree.h — an intrusive interval tree over half-open ranges
 * [start, end) of 64-bit keys: an AVL tree ordered by start, each node
 * augmented with the largest end in its subtree, so that "which intervals
 * overlap [a, b)" and "which interval covers [a, b)" are answered in
 * O(log n + k) without visiting subtrees that cannot match.
 *
 *                 [40,60) max 90
 *                /              \
 *      [10,30) max 35       [70,90) max 90
 *       /                        \
 *   [5,35) max 35             [80,85) max 85
 *
 *   covering(20, 25): left of the root (max 35 >= 25) -> [5,35) ... found;
 *   the right subtree is never entered because its starts are > 20.
 *
 * Intervals may overlap and may share a start (ties are broken by node
 * address). The tree does no allocation and no locking: the owner embeds
 * an ibx_itree_node_t in its objects and serialises access.
 */
#ifndef IBX_INTERVAL_TREE_H
#define IBX_INTERVAL_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ibx_itree_node {
	struct ibx_itree_node *left, *right;
	uint64_t start, end; /* [start, end), start < end; set before insert */
	uint64_t max_end;    /* largest end in this subtree */
	int height;
} ibx_itree_node_t;

typedef struct ibx_itree {
	ibx_itree_node_t *root;
	size_t count;
} ibx_itree_t;

void ibx_itree_init(ibx_itree_t *tree);
/* Inserts @node, whose start/end the caller has set (start < end). */
void ibx_itree_insert(ibx_itree_t *tree, ibx_itree_node_t *node);
/* Removes @node, which must be in @tree. */
void ibx_itree_remove(ibx_itree_t *tree, ibx_itree_node_t *node);
/* The interval with the lowest start that contains all of [start, end), or
 * NULL. */
ibx_itree_node_t *ibx_itree_find_covering(const ibx_itree_t *tree, uint64_t start, uint64_t end);
/* The interval with the lowest start that overlaps [start, end), or NULL. */
ibx_itree_node_t *ibx_itree_first_overlap(const ibx_itree_t *tree, uint64_t start, uint64_t end);
/* Calls @cb for each interval overlapping [start, end), in ascending start
 * order, until @cb returns non-zero (which is then returned). @cb must not
 * change the tree. */
int ibx_itree_for_each_overlap(const ibx_itree_t *tree, uint64_t start, uint64_t end,
			       int (*cb)(ibx_itree_node_t *node, void *arg), void *arg);
/* Checks the AVL and augmentation invariants (tests); returns 0 if sound. */
int ibx_itree_check(const ibx_itree_t *tree);

#endif /* IBX_INTERVAL_TREE_H */
