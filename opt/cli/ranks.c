/* Starting the ranks of an optimized run: MPI, the transport, the threads of each rank. */
#include <stdio.h>
#include <stdlib.h>

#include "opt/cli/commands.h"
#include "opt/kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int start_ranks(comm *group, int quiet, tf_error *err)
{
    char reason[256];
    if (comm_init(group, NULL, NULL, 0, reason, sizeof reason, err) != TF_OK)
        return TF_ERR_SYSTEM;
    /* One thread per rank unless OMP_NUM_THREADS asks for more: ranks are the unit of
     * parallelism (threads within a rank helped little and hurt small graphs on the 2-core
     * development machine; chapter 01's performance section has the numbers). */
    int threads = 1;
#ifdef _OPENMP
    if (getenv("OMP_NUM_THREADS"))
        threads = omp_get_max_threads();
#endif
    opt_set_threads(threads);
    if (group->rank == 0 && !quiet)
        printf("impl opt: %d rank(s), %d thread(s) per rank; collectives: %s\n", group->size, threads, reason);
    return TF_OK;
}

int finish_ranks(comm *group, int status, const tf_error *err)
{
    if (status != TF_OK && group->size > 1) {
        /* The other ranks may be waiting in a collective: report and take them down. */
        fprintf(stderr, "twofold: error on rank %d: %s\n", group->rank, err->message);
        MPI_Abort(group->world, status);
    }
    comm_finalize(group);
    return status;
}
