/* ibx-test: np=1,2 timeout=30 launchers=mpilite,ompi nodes=1 */
/*
 * errcode_user — error classes and codes added by the program
 * (MPI_Add_error_class / _code / _string): numbers above MPI_ERR_LASTCODE,
 * MPI_LASTUSEDCODE following them, MPI_Error_class and MPI_Error_string
 * answering for them, a code raised with MPI_Comm_call_errhandler reaching
 * the program's handler as it was, and the refusals (a code that is not a
 * class, a string for a predefined code, a string too long). Also the
 * calls about processes mpi-lite does not have: MPI_Comm_get_parent gives
 * MPI_COMM_NULL, MPI_Comm_remote_size / _group refuse an intracommunicator;
 * and MPI_Pcontrol, which does nothing and succeeds.
 */
#include "mpitest.h"

#include <string.h>

static int seen_code = -1;

static void handler(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	seen_code = *code;
}

int main(int argc, char **argv)
{
	int rank, size, cls, cls2, code, got, len, flag, *last;
	char str[MPI_MAX_ERROR_STRING + 8], longstr[MPI_MAX_ERROR_STRING + 8];
	MPI_Errhandler eh;
	MPI_Comm parent;
	MPI_Group g;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

	MPI_OK(MPI_Add_error_class(&cls));
	MPI_OK(MPI_Add_error_code(cls, &code));
	MPI_OK(MPI_Add_error_class(&cls2));
	CHECK(cls > MPI_ERR_LASTCODE && code > MPI_ERR_LASTCODE && cls2 > MPI_ERR_LASTCODE &&
		  cls != code && code != cls2 && cls != cls2,
	      "added class %d, code %d, class %d", cls, code, cls2);
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
	CHECK(flag && *last >= cls2, "MPI_LASTUSEDCODE %d below the last class added",
	      flag ? *last : -1);
	if (MPILITE_BUILD) /* mpi-lite: one number after the other */
		CHECK(code == cls + 1 && cls2 == code + 1 && *last == cls2,
		      "class %d, code %d, class %d, last %d", cls, code, cls2, *last);

	MPI_OK(MPI_Error_class(code, &got));
	CHECK(got == cls, "class of the code: %d, want %d", got, cls);
	MPI_OK(MPI_Error_class(cls2, &got));
	CHECK(got == cls2, "a class is its own class: %d", got);
	MPI_OK(MPI_Error_string(code, str, &len));
	CHECK(len == 0, "no string set yet: \"%s\"", str);
	MPI_OK(MPI_Add_error_string(code, "the solver diverged"));
	MPI_OK(MPI_Add_error_string(code, "the solver diverged twice")); /* replaced */
	MPI_OK(MPI_Error_string(code, str, &len));
	CHECK(!strcmp(str, "the solver diverged twice") && len == (int)strlen(str), "string \"%s\"",
	      str);

	/* raised by the program, seen by its handler as it was */
	MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
	MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
	CHECK(seen_code == code, "handler saw %d, want %d", seen_code, code);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Errhandler_free(&eh));

	/* refusals */
	MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_code(code, &got)); /* a code, not a class */
	MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_code(cls2 + 100, &got));
	MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_TYPE, "mine now"));
	MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_string(cls2 + 1, "nobody's"));
	memset(longstr, 'x', sizeof(longstr) - 1);
	longstr[sizeof(longstr) - 1] = 0;
	MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_string(cls, longstr));
	MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_class(NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(cls2 + 1, &got));
	MPI_FAILS(MPI_ERR_ARG, MPI_Error_string(-1, str, &len));

	/* processes mpi-lite does not have */
	parent = MPI_COMM_WORLD;
	MPI_OK(MPI_Comm_get_parent(&parent));
	CHECK(parent == MPI_COMM_NULL, "a parent communicator");
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &got));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_remote_group(MPI_COMM_WORLD, &g));
	MPI_OK(MPI_Pcontrol(0));
	MPI_OK(MPI_Pcontrol(2, "ignored"));

	if (rank == 0)
		printf("errcode_user: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
