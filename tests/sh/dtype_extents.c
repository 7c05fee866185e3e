/*
 * dtype_extents.c — prints size, bounds and extents of a set of derived
 * datatypes, one line each. Built twice by dtype_extents.sh, against
 * mpi-lite (mpilite-cc) and against Open MPI (mpicc.openmpi): the outputs
 * must be identical, since users compare extents with those libraries
 * (e.g. the alignment padding applies to struct types only).
 *
 * Only portable MPI-3.1 calls; one process is enough.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

static int failures;

static void show(const char *name, MPI_Datatype t)
{
	MPI_Aint lb, ext, tlb, text;
	MPI_Count size;
	int isize;

	if (MPI_Type_commit(&t) != MPI_SUCCESS) {
		printf("%-34s commit failed\n", name);
		failures++;
		return;
	}
	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	MPI_Type_size_x(t, &size);
	MPI_Type_size(t, &isize);
	printf("%-34s size %4lld/%4d lb %5ld extent %5ld true_lb %5ld true_extent %5ld\n", name,
	       (long long)size, isize, (long)lb, (long)ext, (long)tlb, (long)text);
	MPI_Type_free(&t);
}

/* a committed copy of a predefined type, to build from */
static MPI_Datatype dup_of(MPI_Datatype t)
{
	MPI_Datatype d;

	MPI_Type_dup(t, &d);
	return d;
}

int main(int argc, char **argv)
{
	MPI_Datatype t, u, v, w, tys[4];
	int bl[4], di[4];
	MPI_Aint da[4];

	MPI_Init(&argc, &argv);

	/* predefined ones, through dup (a predefined handle cannot be freed) */
	show("dup(MPI_INT)", dup_of(MPI_INT));
	show("dup(MPI_LONG_DOUBLE)", dup_of(MPI_LONG_DOUBLE));
	show("dup(MPI_FLOAT_INT)", dup_of(MPI_FLOAT_INT));
	show("dup(MPI_DOUBLE_INT)", dup_of(MPI_DOUBLE_INT));
	show("dup(MPI_LONG_INT)", dup_of(MPI_LONG_INT));
	show("dup(MPI_2INT)", dup_of(MPI_2INT));
	show("dup(MPI_SHORT_INT)", dup_of(MPI_SHORT_INT));
	show("dup(MPI_LONG_DOUBLE_INT)", dup_of(MPI_LONG_DOUBLE_INT));
	show("dup(MPI_C_DOUBLE_COMPLEX)", dup_of(MPI_C_DOUBLE_COMPLEX));

	/* contiguous, vector, hvector */
	MPI_Type_contiguous(5, MPI_SHORT, &t);
	show("contiguous(5,short)", t);
	MPI_Type_contiguous(0, MPI_DOUBLE, &t);
	show("contiguous(0,double)", t);
	MPI_Type_vector(3, 2, 4, MPI_INT, &t);
	show("vector(3,2,4,int)", t);
	MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t);
	show("vector(3,1,-2,double)", t);
	MPI_Type_vector(2, 3, 1, MPI_INT, &t);
	show("vector(2,3,1,int) overlapping", t);
	MPI_Type_create_hvector(2, 1, 12, MPI_DOUBLE, &t);
	show("hvector(2,1,12,double)", t);
	MPI_Type_create_hvector(3, 2, 9, MPI_CHAR, &t);
	show("hvector(3,2,9,char)", t);
	MPI_Type_create_hvector(2, 1, 6, MPI_INT, &t);
	show("hvector(2,1,6,int)", t);
	MPI_Type_create_hvector(2, 1, -20, MPI_DOUBLE, &t);
	show("hvector(2,1,-20,double)", t);

	/* indexed family */
	bl[0] = 2, bl[1] = 1, bl[2] = 3;
	di[0] = 1, di[1] = 5, di[2] = 9;
	MPI_Type_indexed(3, bl, di, MPI_INT, &t);
	show("indexed({2,1,3},{1,5,9},int)", t);
	di[0] = 4, di[1] = -2, di[2] = 0;
	MPI_Type_indexed(3, bl, di, MPI_DOUBLE, &t);
	show("indexed({2,1,3},{4,-2,0},double)", t);
	da[0] = 3, da[1] = 17, da[2] = 40;
	MPI_Type_create_hindexed(3, bl, da, MPI_DOUBLE, &t);
	show("hindexed({2,1,3},{3,17,40},dbl)", t);
	di[0] = 0, di[1] = 3, di[2] = 7;
	MPI_Type_create_indexed_block(3, 2, di, MPI_SHORT, &t);
	show("indexed_block(3,2,{0,3,7},short)", t);
	da[0] = 1, da[1] = 10, da[2] = 30;
	MPI_Type_create_hindexed_block(3, 1, da, MPI_INT, &t);
	show("hindexed_block(3,1,{1,10,30},int)", t);

	/* structs: the padding rule */
	bl[0] = 1, bl[1] = 1;
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_DOUBLE, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{double@0,char@8}", t);
	da[0] = 0, da[1] = 4;
	tys[0] = MPI_INT, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{int@0,char@4}", t);
	da[0] = 0, da[1] = 2;
	tys[0] = MPI_SHORT, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{short@0,char@2}", t);
	da[0] = 4, da[1] = 20;
	tys[0] = MPI_CHAR, tys[1] = MPI_DOUBLE;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{char@4,double@20}", t);
	da[0] = 0, da[1] = 16;
	tys[0] = MPI_LONG_DOUBLE, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{long double@0,char@16}", t);
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_CHAR, tys[1] = MPI_C_DOUBLE_COMPLEX;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{char@0,double complex@8}", t);
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_C_FLOAT_COMPLEX, tys[1] = MPI_SHORT;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{float complex@0,short@8}", t);
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_LONG, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{long@0,char@8}", t);
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_DOUBLE_INT, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{MPI_DOUBLE_INT@0,char@8}", t);
	bl[0] = 3;
	da[0] = 0;
	tys[0] = MPI_CHAR;
	MPI_Type_create_struct(1, bl, da, tys, &t);
	show("struct{char[3]}", t);
	/* MPI-3.1 example 4.6 shape: {float x2 @0, {double,char} @16, char x3 @26} */
	bl[0] = 1, bl[1] = 1;
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_DOUBLE, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &u);
	bl[0] = 2, bl[1] = 1, bl[2] = 3;
	da[0] = 0, da[1] = 16, da[2] = 26;
	tys[0] = MPI_FLOAT, tys[1] = u, tys[2] = MPI_CHAR;
	MPI_Type_create_struct(3, bl, da, tys, &t);
	show("struct{float[2],{dbl,chr},char[3]}", t);

	/* padded structs inside other constructors */
	MPI_Type_contiguous(2, u, &t);
	show("contiguous(2,{dbl,chr})", t);
	MPI_Type_vector(2, 1, 3, u, &t);
	show("vector(2,1,3,{dbl,chr})", t);
	MPI_Type_create_hvector(2, 1, 20, u, &t);
	show("hvector(2,1,20,{dbl,chr})", t);
	bl[0] = 1;
	da[0] = 0;
	tys[0] = u;
	MPI_Type_create_struct(1, bl, da, tys, &t);
	show("struct{{dbl,chr}}", t);
	MPI_Type_free(&u);

	/* an unpadded hvector inside a struct: the struct pads */
	MPI_Type_create_hvector(2, 1, 12, MPI_DOUBLE, &v);
	bl[0] = 1, bl[1] = 1;
	da[0] = 0, da[1] = 20;
	tys[0] = v, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{hvec(2,1,12,dbl),char@20}", t);
	MPI_Type_contiguous(2, v, &t);
	show("contiguous(2,hvec(2,1,12,dbl))", t);
	MPI_Type_free(&v);

	/* resized: explicit bounds win, also over struct padding */
	MPI_Type_create_resized(MPI_INT, -4, 12, &t);
	show("resized(int,-4,12)", t);
	MPI_Type_create_resized(MPI_INT, -4, 12, &v);
	MPI_Type_contiguous(3, v, &t);
	show("contiguous(3,resized(int,-4,12))", t);
	bl[0] = 1, bl[1] = 1;
	da[0] = 0, da[1] = 30;
	tys[0] = v, tys[1] = MPI_DOUBLE;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{resized(int,-4,12),dbl@30}", t);
	MPI_Type_free(&v);
	MPI_Type_create_resized(MPI_DOUBLE, 0, 5, &v);
	MPI_Type_contiguous(2, v, &t);
	show("contiguous(2,resized(dbl,0,5))", t);
	bl[0] = 1, bl[1] = 1;
	da[0] = 0, da[1] = 5;
	tys[0] = v, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &t);
	show("struct{resized(dbl,0,5),char@5}", t);
	MPI_Type_free(&v);
	bl[0] = 1, bl[1] = 1;
	da[0] = 0, da[1] = 8;
	tys[0] = MPI_DOUBLE, tys[1] = MPI_CHAR;
	MPI_Type_create_struct(2, bl, da, tys, &u);
	MPI_Type_create_resized(u, 0, 9, &t);
	show("resized({dbl,chr},0,9)", t);
	MPI_Type_create_resized(u, 0, 9, &v);
	MPI_Type_contiguous(3, v, &t);
	show("contiguous(3,resized({dbl,chr},0,9))", t);
	MPI_Type_free(&v);
	MPI_Type_free(&u);

	/* dup of a derived type */
	MPI_Type_vector(4, 1, 3, MPI_FLOAT, &u);
	MPI_Type_dup(u, &t);
	show("dup(vector(4,1,3,float))", t);
	MPI_Type_free(&u);

	/* subarrays, both orders */
	{
		int sz[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, st[3] = {1, 1, 3};

		MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
		show("subarray C 4x5x6 [2,3,2]@[1,1,3] dbl", t);
		MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
		show("subarray F 4x5x6 [2,3,2]@[1,1,3] dbl", t);
		MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_CHAR, &t);
		show("subarray C 4x5 [2,3]@[1,1] char", t);
		bl[0] = 1, bl[1] = 1;
		da[0] = 0, da[1] = 8;
		tys[0] = MPI_DOUBLE, tys[1] = MPI_CHAR;
		MPI_Type_create_struct(2, bl, da, tys, &u);
		MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, u, &t);
		show("subarray F 4x5 [2,3]@[1,1] {dbl,chr}", t);
		MPI_Type_free(&u);
	}

	/* nesting: a vector of structs of vectors */
	MPI_Type_vector(2, 1, 2, MPI_SHORT, &v);
	bl[0] = 1, bl[1] = 2;
	da[0] = 0, da[1] = 12;
	tys[0] = v, tys[1] = MPI_INT;
	MPI_Type_create_struct(2, bl, da, tys, &u);
	MPI_Type_vector(3, 2, 3, u, &w);
	show("vector(3,2,3,struct{vec,int[2]})", w);
	MPI_Type_free(&u);
	MPI_Type_free(&v);

	MPI_Finalize();
	return failures ? 1 : 0;
}
