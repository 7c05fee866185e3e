/*
 * list.h — the one intrusive doubly linked list of ibx (as rdma-core's
 * ccan/list and the kernel's list_head, but NULL-terminated, so that a
 * zeroed list and a zeroed node are valid without an init call).
 *
 *   typedef struct item { ...; ibx_list_node_t link; } item_t;
 *   ibx_list_t q = {0};
 *   ibx_list_push_tail(&q, &it->link);
 *   ibx_list_for_each_entry(it, &q, item_t, link) ...
 *   item_t *first = ibx_list_first_entry(&q, item_t, link);   (NULL if empty)
 *
 * A node is on at most one list at a time; ibx_list_remove() leaves it
 * unlinked (next = prev = NULL). An optional element count is kept by the
 * caller where it needs one. struct ibx_list_node itself is declared in
 * ibx.h, since the public request embeds one.
 */
#ifndef IBX_LIST_H
#define IBX_LIST_H

#include "ibx.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct ibx_list_node ibx_list_node_t;

typedef struct ibx_list {
	ibx_list_node_t *head, *tail;
} ibx_list_t;

#define ibx_list_entry(node, type, member) ((type *)((char *)(node)-offsetof(type, member)))

static inline bool ibx_list_empty(const ibx_list_t *l)
{
	return l->head == NULL;
}

static inline void ibx_list_push_tail(ibx_list_t *l, ibx_list_node_t *n)
{
	n->next = NULL;
	n->prev = l->tail;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
}

static inline void ibx_list_push_head(ibx_list_t *l, ibx_list_node_t *n)
{
	n->prev = NULL;
	n->next = l->head;
	if (l->head)
		l->head->prev = n;
	else
		l->tail = n;
	l->head = n;
}

static inline void ibx_list_remove(ibx_list_t *l, ibx_list_node_t *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->next = n->prev = NULL;
}

/* Removes and returns the first node, NULL when the list is empty. */
static inline ibx_list_node_t *ibx_list_pop_head(ibx_list_t *l)
{
	ibx_list_node_t *n = l->head;

	if (n)
		ibx_list_remove(l, n);
	return n;
}

/* Moves every node of @from to the end of @to (in order); @from is empty. */
static inline void ibx_list_splice_tail(ibx_list_t *to, ibx_list_t *from)
{
	if (!from->head)
		return;
	if (to->tail) {
		to->tail->next = from->head;
		from->head->prev = to->tail;
	} else {
		to->head = from->head;
	}
	to->tail = from->tail;
	from->head = from->tail = NULL;
}

#define ibx_list_first_entry(l, type, member)                                                      \
	((l)->head ? ibx_list_entry((l)->head, type, member) : (type *)NULL)
#define ibx_list_next_entry(e, type, member)                                                       \
	((e)->member.next ? ibx_list_entry((e)->member.next, type, member) : (type *)NULL)

/* Iterates @e over the entries; the loop body must not remove @e. */
#define ibx_list_for_each_entry(e, l, type, member)                                                \
	for ((e) = ibx_list_first_entry(l, type, member); (e);                                     \
	     (e) = ibx_list_next_entry(e, type, member))
/* The same, where the body may remove (or free) @e; @n is scratch. */
#define ibx_list_for_each_entry_safe(e, n, l, type, member)                                        \
	for ((e) = ibx_list_first_entry(l, type, member),                                          \
	    (n) = (e) ? ibx_list_next_entry(e, type, member) : (type *)NULL;                       \
	     (e); (e) = (n), (n) = (e) ? ibx_list_next_entry(e, type, member) : (type *)NULL)

#endif /* IBX_LIST_H */
