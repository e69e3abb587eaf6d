/* SPDX-License-Identifier: MIT */
/*
 * MPI collectives whose every result is checked: MPI_Allreduce (sum) and
 * MPI_Alltoall of 64-bit words, from 1 word to 1 MiB a block (the large
 * ones go by UCX's rendezvous, RDMA on rc_verbs), a few rounds each, on
 * all ranks.  Each word says which rank sent it, to whom and where, so a
 * word that lands in the wrong place is caught as well as a damaged one.
 * Rank 0 prints the totals; the exit status is 0 only if nothing was bad
 * on any rank.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 3

static uint64_t word(int from, int to, uint64_t i)
{
	return (uint64_t)from << 48 | (uint64_t)to << 32 | i;
}

/* Allreduce of n words: rank r contributes r * 1000003 + i + round. */
static uint64_t check_allreduce(int rank, int size, size_t n, int round)
{
	uint64_t *in = malloc(n * 8), *out = malloc(n * 8), bad = 0;
	uint64_t ranks = (uint64_t)size * (size - 1) / 2;
	size_t i;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < n; i++) {
		in[i] = (uint64_t)rank * 1000003 + i + round;
		out[i] = ~0ull;
	}
	MPI_Allreduce(in, out, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < n; i++)
		if (out[i] != ranks * 1000003 + (uint64_t)size * (i + round))
			bad++;
	free(in);
	free(out);
	return bad;
}

/* Alltoall of n words a block. */
static uint64_t check_alltoall(int rank, int size, size_t n, int round)
{
	uint64_t *in = malloc(n * size * 8), *out = malloc(n * size * 8);
	uint64_t bad = 0;
	size_t i;
	int p;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (p = 0; p < size; p++)
		for (i = 0; i < n; i++) {
			in[p * n + i] = word(rank, p, i + round);
			out[p * n + i] = ~0ull;
		}
	MPI_Alltoall(in, (int)n, MPI_UINT64_T, out, (int)n, MPI_UINT64_T,
		     MPI_COMM_WORLD);
	for (p = 0; p < size; p++)
		for (i = 0; i < n; i++)
			if (out[p * n + i] != word(p, rank, i + round))
				bad++;
	free(in);
	free(out);
	return bad;
}

int main(int argc, char **argv)
{
	static const size_t words[] = {1, 1000, 16384, 131072};
	uint64_t bad = 0, checked = 0, all_bad = 0, all_checked = 0;
	int rank, size, round;
	unsigned k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (round = 0; round < ROUNDS; round++)
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
			bad += check_allreduce(rank, size, words[k], round);
			bad += check_alltoall(rank, size, words[k], round);
			checked += words[k] * (1 + (uint64_t)size);
		}
	if (bad)
		fprintf(stderr, "rank %d: %" PRIu64 " bad words of %" PRIu64
			"\n", rank, bad, checked);
	MPI_Reduce(&bad, &all_bad, 1, MPI_UINT64_T, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	MPI_Reduce(&checked, &all_checked, 1, MPI_UINT64_T, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %d ranks, %" PRIu64 " words checked, %" PRIu64
		       " bad: %s\n", size, all_checked, all_bad,
		       all_bad ? "BAD" : "OK");
	MPI_Bcast(&all_bad, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return all_bad ? 1 : 0;
}
