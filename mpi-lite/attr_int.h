/*
 * attr_int.h — attribute caching for any kind of object (attr.c): the
 * lists behind comm->attrs and win->attrs (win_attr.c) and the keyvals of
 * every kind, which share one numbering; a keyval is valid only on its own
 * kind (a communicator keyval used on a window is MPI_ERR_KEYVAL).
 */
#ifndef MPIL_ATTR_INT_H
#define MPIL_ATTR_INT_H

#include "mpil_int.h"

/* @attrs: the object's `attrs` field; @obj: what delete callbacks receive.
 * These return MPI error classes (a callback's failure, MPI_ERR_NO_MEM)
 * without reporting them. */
enum mpil_attr_kind { MPIL_ATTR_COMM, MPIL_ATTR_WIN };
int mpil_keyval_create(int kind, MPI_Comm_copy_attr_function *copy_fn,
		       MPI_Comm_delete_attr_function *delete_fn,
		       MPI_Win_delete_attr_function *win_delete_fn, void *extra, int *keyval_p);
bool mpil_keyval_valid(int kind, int keyval);
/* Valid, or freed while attributes still use it (get and delete accept it). */
bool mpil_keyval_alive(int kind, int keyval);
/* Why @keyval is not a live keyval of @kind ("freed"...), for messages. */
const char *mpil_keyval_why(int kind, int keyval);
/* MPI_ERR_KEYVAL unless @keyval is a live keyval of @kind. */
int mpil_keyval_free(int kind, int *keyval);
int mpil_attrs_set(void *obj, void **attrs, int keyval, void *val);
bool mpil_attrs_get(void *const *attrs, int keyval, void **val_p);
int mpil_attrs_delete(void *obj, void **attrs, int keyval);
/* Newest first; stops at the first callback error. */
int mpil_attrs_delete_all(void *obj, void **attrs);
void mpil_attrs_drop(void **attrs);

#endif /* MPIL_ATTR_INT_H */
