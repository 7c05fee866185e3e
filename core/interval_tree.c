/*
 * interval_tree.c — AVL interval tree (see interval_tree.h).
 *
 * Recursive insert/remove: the height is at most 1.44 log2(n), so the
 * recursion depth stays below ~90 even for 2^60 nodes. Every rotation and
 * every return from a level recomputes height and max_end of the nodes it
 * touched, which keeps the augmentation exact.
 */
#include "interval_tree.h"

#include <stdbool.h>

static inline int height(const ibx_itree_node_t *n)
{
	return n ? n->height : 0;
}

static inline uint64_t max_end(const ibx_itree_node_t *n)
{
	return n ? n->max_end : 0;
}

static void update(ibx_itree_node_t *n)
{
	int hl = height(n->left), hr = height(n->right);
	uint64_t m = n->end;

	n->height = 1 + (hl > hr ? hl : hr);
	if (max_end(n->left) > m)
		m = max_end(n->left);
	if (max_end(n->right) > m)
		m = max_end(n->right);
	n->max_end = m;
}

/* Total order: start, then node address (several intervals may share a start). */
static inline bool less(const ibx_itree_node_t *a, const ibx_itree_node_t *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	return (uintptr_t)a < (uintptr_t)b;
}

static ibx_itree_node_t *rotate_right(ibx_itree_node_t *n)
{
	ibx_itree_node_t *l = n->left;

	n->left = l->right;
	l->right = n;
	update(n);
	update(l);
	return l;
}

static ibx_itree_node_t *rotate_left(ibx_itree_node_t *n)
{
	ibx_itree_node_t *r = n->right;

	n->right = r->left;
	r->left = n;
	update(n);
	update(r);
	return r;
}

static ibx_itree_node_t *rebalance(ibx_itree_node_t *n)
{
	int bal;

	update(n);
	bal = height(n->left) - height(n->right);
	if (bal > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (bal < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	return n;
}

static ibx_itree_node_t *insert_at(ibx_itree_node_t *root, ibx_itree_node_t *node)
{
	if (!root)
		return node;
	if (less(node, root))
		root->left = insert_at(root->left, node);
	else
		root->right = insert_at(root->right, node);
	return rebalance(root);
}

/* Detaches the leftmost node of @root into *min_p; returns the new subtree. */
static ibx_itree_node_t *remove_min(ibx_itree_node_t *root, ibx_itree_node_t **min_p)
{
	if (!root->left) {
		*min_p = root;
		return root->right;
	}
	root->left = remove_min(root->left, min_p);
	return rebalance(root);
}

static ibx_itree_node_t *remove_at(ibx_itree_node_t *root, ibx_itree_node_t *node, bool *found)
{
	ibx_itree_node_t *succ;

	if (!root)
		return NULL;
	if (root == node) {
		*found = true;
		if (!root->left)
			return root->right;
		if (!root->right)
			return root->left;
		root->right = remove_min(root->right, &succ);
		succ->left = root->left;
		succ->right = root->right;
		return rebalance(succ);
	}
	if (less(node, root))
		root->left = remove_at(root->left, node, found);
	else
		root->right = remove_at(root->right, node, found);
	return rebalance(root);
}

void ibx_itree_init(ibx_itree_t *tree)
{
	tree->root = NULL;
	tree->count = 0;
}

void ibx_itree_insert(ibx_itree_t *tree, ibx_itree_node_t *node)
{
	node->left = node->right = NULL;
	node->height = 1;
	node->max_end = node->end;
	tree->root = insert_at(tree->root, node);
	tree->count++;
}

void ibx_itree_remove(ibx_itree_t *tree, ibx_itree_node_t *node)
{
	bool found = false;

	tree->root = remove_at(tree->root, node, &found);
	if (found)
		tree->count--;
	node->left = node->right = NULL;
}

static ibx_itree_node_t *covering_at(ibx_itree_node_t *n, uint64_t start, uint64_t end)
{
	ibx_itree_node_t *hit;

	/* Nothing in this subtree reaches @end. */
	if (!n || n->max_end < end)
		return NULL;
	hit = covering_at(n->left, start, end);
	if (hit)
		return hit;
	/* This node and everything right of it start after @start. */
	if (n->start > start)
		return NULL;
	if (n->end >= end)
		return n;
	return covering_at(n->right, start, end);
}

ibx_itree_node_t *ibx_itree_find_covering(const ibx_itree_t *tree, uint64_t start, uint64_t end)
{
	return covering_at(tree->root, start, end);
}

static ibx_itree_node_t *overlap_at(ibx_itree_node_t *n, uint64_t start, uint64_t end)
{
	ibx_itree_node_t *hit;

	if (!n || n->max_end <= start)
		return NULL;
	hit = overlap_at(n->left, start, end);
	if (hit)
		return hit;
	if (n->start >= end)
		return NULL;
	if (n->end > start)
		return n;
	return overlap_at(n->right, start, end);
}

ibx_itree_node_t *ibx_itree_first_overlap(const ibx_itree_t *tree, uint64_t start, uint64_t end)
{
	return overlap_at(tree->root, start, end);
}

static int for_each_at(ibx_itree_node_t *n, uint64_t start, uint64_t end,
		       int (*cb)(ibx_itree_node_t *, void *), void *arg)
{
	int rc;

	if (!n || n->max_end <= start)
		return 0;
	rc = for_each_at(n->left, start, end, cb, arg);
	if (rc)
		return rc;
	if (n->start >= end)
		return 0;
	if (n->end > start) {
		rc = cb(n, arg);
		if (rc)
			return rc;
	}
	return for_each_at(n->right, start, end, cb, arg);
}

int ibx_itree_for_each_overlap(const ibx_itree_t *tree, uint64_t start, uint64_t end,
			       int (*cb)(ibx_itree_node_t *node, void *arg), void *arg)
{
	return for_each_at(tree->root, start, end, cb, arg);
}

/* Returns the number of nodes, or -1 when an invariant is broken. */
static long check_at(const ibx_itree_node_t *n, const ibx_itree_node_t *lo,
		     const ibx_itree_node_t *hi)
{
	long cl, cr;
	int hl, hr;
	uint64_t m;

	if (!n)
		return 0;
	if (n->start >= n->end)
		return -1;
	if ((lo && less(n, lo)) || (hi && less(hi, n)))
		return -1;
	cl = check_at(n->left, lo, n);
	cr = check_at(n->right, n, hi);
	if (cl < 0 || cr < 0)
		return -1;
	hl = height(n->left);
	hr = height(n->right);
	if (hl - hr > 1 || hr - hl > 1 || n->height != 1 + (hl > hr ? hl : hr))
		return -1;
	m = n->end;
	if (max_end(n->left) > m)
		m = max_end(n->left);
	if (max_end(n->right) > m)
		m = max_end(n->right);
	if (n->max_end != m)
		return -1;
	return cl + cr + 1;
}

int ibx_itree_check(const ibx_itree_t *tree)
{
	long n = check_at(tree->root, NULL, NULL);

	return (n < 0 || (size_t)n != tree->count) ? -1 : 0;
}
