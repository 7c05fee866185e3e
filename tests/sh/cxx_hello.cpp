// cxx_hello.cpp — a small C++ MPI program for cxx_wrapper.sh: mpi.h from
// C++ (built with mpilite-cxx -Wall -Wextra -Werror -pedantic), standard
// containers as MPI buffers, a collective and a ring exchange.
//
//   rank R of S: sum 0..S-1 = <S(S-1)/2>, max = <S-1>, from left <R-1 mod S>
//   rank R: ok
// Exit status: 0, or 1 with "rank R: FAIL ..." on stderr.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

// Values per rank: enough to go beyond a single small message.
constexpr int kCount = 1000;

int fail(int rank, const std::string &what)
{
	std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what.c_str());
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	int rank = 0, size = 0;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	// Allreduce over a std::vector, in place and not
	std::vector<long> mine(kCount, rank), sum(kCount);
	if (MPI_Allreduce(mine.data(), sum.data(), kCount, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) !=
	    MPI_SUCCESS)
		return fail(rank, "MPI_Allreduce");
	const long want = static_cast<long>(size) * (size - 1) / 2;
	for (long v : sum)
		if (v != want)
			return fail(rank, "sum " + std::to_string(v) + " != " + std::to_string(want));
	std::vector<int> top(1, rank);
	if (MPI_Allreduce(MPI_IN_PLACE, top.data(), 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) !=
	    MPI_SUCCESS)
		return fail(rank, "MPI_Allreduce in place");

	// Ring: send to the right, receive from the left
	const int right = (rank + 1) % size, left = (rank + size - 1) % size;
	std::vector<double> out(kCount), in(kCount, -1.0);
	std::iota(out.begin(), out.end(), rank * 1e6);
	MPI_Status st;
	if (MPI_Sendrecv(out.data(), kCount, MPI_DOUBLE, right, 7, in.data(), kCount, MPI_DOUBLE,
			 left, 7, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
		return fail(rank, "MPI_Sendrecv");
	int got = 0;
	MPI_Get_count(&st, MPI_DOUBLE, &got);
	if (st.MPI_SOURCE != left || st.MPI_TAG != 7 || got != kCount)
		return fail(rank, "status of MPI_Sendrecv");
	for (int i = 0; i < kCount; i++)
		if (in[i] != left * 1e6 + i)
			return fail(rank, "ring data at " + std::to_string(i));

	std::printf("rank %d of %d: sum 0..%d = %ld, max = %d, from left %d\n", rank, size,
		    size - 1, sum[0], top[0], left);
	MPI_Barrier(MPI_COMM_WORLD);
	std::printf("rank %d: ok\n", rank);
	MPI_Finalize();
	return 0;
}
