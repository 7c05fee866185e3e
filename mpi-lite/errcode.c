/*
 * errcode.c — error classes and codes added by the program (MPI-3.1
 * §8.5): MPI_Add_error_class, MPI_Add_error_code, MPI_Add_error_string.
 *
 * mpi-lite's own error codes are its error classes (0 .. MPI_ERR_LASTCODE,
 * the table in errhandler.c). Added ones follow them, one number each,
 * whether class or code:
 *
 *   MPI_ERR_LASTCODE + 1 + i  ->  added[i] = {its class, its string}
 *
 * A class is its own class. MPI_LASTUSEDCODE (an attribute of
 * MPI_COMM_WORLD) is the highest number in use. MPI_Error_class and
 * MPI_Error_string read the table through mpil_errcode_class /
 * mpil_errcode_string (which also tells whether a number was added);
 * MPI_Finalize drops it.
 */
#include "mpil_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct added_code {
	int errclass;
	char *string; /* NULL: none set yet (an empty string is reported) */
} added_code_t;

static added_code_t *added;
static int nadded, cap;

int mpil_errcode_last(void)
{
	return MPI_ERR_LASTCODE + nadded;
}

static added_code_t *added_of(int code)
{
	return code > MPI_ERR_LASTCODE && code <= mpil_errcode_last()
		   ? &added[code - MPI_ERR_LASTCODE - 1]
		   : NULL;
}

bool mpil_errcode_class(int code, int *errclass)
{
	const added_code_t *a = added_of(code);

	if (code >= 0 && code <= MPI_ERR_LASTCODE) {
		*errclass = code;
		return true;
	}
	if (!a)
		return false;
	*errclass = a->errclass;
	return true;
}

const char *mpil_errcode_string(int code)
{
	const added_code_t *a = added_of(code);

	return !a ? NULL : a->string ? a->string : "";
}

void mpil_errcode_fini(void)
{
	for (int i = 0; i < nadded; i++)
		free(added[i].string);
	free(added);
	added = NULL;
	nadded = cap = 0;
}

/* A new number; @errclass < 0: the new number is a class of its own. */
static int add_code(int errclass, int *code_p)
{
	if (nadded == cap) {
		int ncap = cap ? 2 * cap : 16;
		added_code_t *n = realloc(added, (size_t)ncap * sizeof(*n));

		if (!n)
			return MPI_ERR_NO_MEM;
		added = n;
		cap = ncap;
	}
	*code_p = mpil_errcode_last() + 1;
	added[nadded++] = (added_code_t){errclass < 0 ? *code_p : errclass, NULL};
	return MPI_SUCCESS;
}

static bool is_class(int errclass)
{
	const added_code_t *a = added_of(errclass);

	return (errclass >= 0 && errclass <= MPI_ERR_LASTCODE) || (a && a->errclass == errclass);
}

MPIL_PMPI_ALIAS(Add_error_class)
int PMPI_Add_error_class(int *errorclass)
{
	static const char F[] = "MPI_Add_error_class";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!errorclass)
		return mpil_err(NULL, MPI_ERR_ARG, F, "errorclass is NULL");
	if (add_code(-1, errorclass) != MPI_SUCCESS)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a new error class");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Add_error_code)
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
	static const char F[] = "MPI_Add_error_code";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!errorcode)
		return mpil_err(NULL, MPI_ERR_ARG, F, "errorcode is NULL");
	if (!is_class(errorclass))
		return mpil_err(NULL, MPI_ERR_ARG, F, "%d is not an error class", errorclass);
	if (add_code(errorclass, errorcode) != MPI_SUCCESS)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a new error code");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Add_error_string)
int PMPI_Add_error_string(int errorcode, const char *string)
{
	static const char F[] = "MPI_Add_error_string";
	MPIL_CS_GUARD();
	added_code_t *a = added_of(errorcode);
	char *copy;

	MPIL_CHECK(mpil_check_init(F));
	if (!string)
		return mpil_err(NULL, MPI_ERR_ARG, F, "string is NULL");
	if (!a)
		return mpil_err(NULL, MPI_ERR_ARG, F,
				"%d is not an error class or code added by the program", errorcode);
	if (strlen(string) >= MPI_MAX_ERROR_STRING)
		return mpil_err(NULL, MPI_ERR_ARG, F, "string of %zu characters (at most %d)",
				strlen(string), MPI_MAX_ERROR_STRING - 1);
	copy = strdup(string);
	if (!copy)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for the string");
	free(a->string);
	a->string = copy;
	return MPI_SUCCESS;
}
