/*
 * win_acc_check.c — the argument checks of the accumulate family
 * (MPI_Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and the
 * request forms) that do not depend on the operation's state: predefined
 * element types, the op, and one predefined type under every buffer.
 * win_acc.c runs them in order (acc_check).
 */
#include "win_int.h"

static const char *dt_name(MPI_Datatype dt)
{
	return dt->name ? dt->name : "a derived datatype";
}

/* Fetch_and_op and Compare_and_swap: one predefined element (of @groups). */
int mpil_win_check_predefined(MPI_Win win, MPI_Datatype dt, unsigned groups, const char *fname)
{
	MPIL_CHECK(mpil_win_check_dt(win, dt, fname));
	if (ibx_unlikely(!(dt->flags & MPIL_DTF_PREDEFINED)))
		return mpil_win_err(win, MPI_ERR_TYPE, fname, "%s needs a predefined datatype",
				    fname);
	if (ibx_unlikely(groups && !(dt->group & groups)))
		return mpil_win_err(win, MPI_ERR_TYPE, fname,
				    "%s is not a C integer, multi-language, logical or byte type",
				    dt_name(dt));
	return MPI_SUCCESS;
}

/* A predefined op; MPI_NO_OP only where something is fetched. */
int mpil_win_check_op(MPI_Win win, MPI_Op op, bool fetch, const char *fname)
{
	if (ibx_unlikely(!op || op->magic != MPIL_MAGIC_OP))
		return mpil_win_err(win, MPI_ERR_OP, fname, "invalid operation handle %p",
				    (void *)op);
	if (ibx_unlikely(!op->predefined))
		return mpil_win_err(win, MPI_ERR_OP, fname, "%s is not predefined", op->name);
	if (ibx_unlikely(op->id == MPIL_OP_NO_OP && !fetch))
		return mpil_win_err(win, MPI_ERR_OP, fname, "MPI_NO_OP without a result buffer");
	return MPI_SUCCESS;
}

/* Every buffer made of the target's one predefined type, the op defined
 * on it (@odt, @rdt NULL: not used). */
int mpil_win_check_basic(MPI_Win win, MPI_Op op, MPI_Datatype odt, MPI_Datatype rdt,
			 MPI_Datatype tdt, const char *fname)
{
	MPI_Datatype b = tdt->basic;

	if (ibx_unlikely(!b))
		return mpil_win_err(win, MPI_ERR_TYPE, fname,
				    "target datatype %s is not made of one predefined type",
				    dt_name(tdt));
	if (ibx_unlikely((odt && odt->basic != b) || (rdt && rdt->basic != b)))
		return mpil_win_err(win, MPI_ERR_TYPE, fname,
				    "%s datatype %s and target datatype %s are not made of the "
				    "same predefined type",
				    odt && odt->basic != b ? "origin" : "result",
				    dt_name(odt && odt->basic != b ? odt : rdt), dt_name(tdt));
	if (op->id != MPIL_OP_REPLACE && op->id != MPIL_OP_NO_OP && !(op->groups & b->group))
		return mpil_win_err(win, MPI_ERR_OP, fname, "%s is not defined for datatype %s",
				    op->name, b->name);
	return MPI_SUCCESS;
}
