/* Starting the ranks of an optimized run: MPI, the transport, the threads of each rank. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "opt/cli/commands.h"
#include "opt/kernels.h"
#include "ref/core/clock.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int started_by_launcher(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int start_ranks(comm *group, int quiet, tf_error *err)
{
    char reason[256];
    /* Started alone (no launcher's environment), Open MPI 4's MPI_Init starts a daemon for the one
     * process, which needs ssh or rsh on PATH even on this machine and aborts with a page of noise
     * without them (PATH stripped, a container); isolated, the one process starts none. A user's
     * own setting stays. */
    if (!started_by_launcher())
        setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    if (comm_init(group, NULL, NULL, 0, reason, sizeof reason, err) != TF_OK)
        return TF_ERR_SYSTEM;
    /* One thread per rank unless OMP_NUM_THREADS asks for more. A rank's threads share its
     * windows of a step (opt/train.h), as ranks share a step's; libgomp reads OMP_WAIT_POLICY
     * when the program loads, so whether idle threads spin or sleep is the user's setting. */
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

/* Seconds a rank with a bad input waits for the others at the end before it concludes they are
 * still in a collective of training and aborts them. An input error found after the ranks
 * agreed (ranks_agree()) is found by every rank at about the same point, so they arrive together. */
#define FINISH_WAIT_SECONDS 3.0

int finish_ranks(comm *group, int status, tf_error *err)
{
    if (group->size > 1) {
        /* Every rank offers its status and, when it failed with a message, size - rank: the maximum
         * is the worst status and names the lowest failing rank, the one that reports (a rank that
         * stopped because another failed has no message of its own). */
        int mine[2] = {status, status != TF_OK && err->message[0] ? group->size - group->rank : 0};
        int all[2] = {0, 0};
        MPI_Request request;
        int done = 0;
        /* A system failure (a full disk under the writing rank) is offered like any other: the
         * other ranks are waiting here for it. Were MPI itself what failed, the wait below ends. */
        if (MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MAX, group->control, &request) == MPI_SUCCESS) {
            const double deadline = wall_seconds() + FINISH_WAIT_SECONDS;
            if (status == TF_OK) {
                done = MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS;
            } else {
                const struct timespec pause = {0, 1000000}; /* 1 ms between polls */
                while (!done && wall_seconds() < deadline && MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS)
                    if (!done)
                        nanosleep(&pause, NULL);
            }
        }
        if (!done && status != TF_OK) {
            /* The other ranks are still in a collective (or MPI failed): report, then leave with
             * the status. mpiexec ends the ranks still waiting when a rank exits with a non-zero
             * status, with its usual note; MPI_Abort would add a page of Open MPI's own. */
            fprintf(stderr, "twofold: error: rank %d of %d: %s\n", group->rank, group->size, err->message);
            fflush(stderr);
            fflush(stdout);
            _exit(status);
        }
        if (done && all[0] != TF_OK) {
            /* The lowest failing rank reports it here, the others print nothing (main prints no
             * empty message); then all wait for each other. A rank that left at once with its
             * non-zero code made mpiexec end the job, now and then before the reporting rank had
             * written its line: the run failed without a word. */
            if (group->rank == group->size - all[1] && err->message[0]) {
                fprintf(stderr, "twofold: error: %s\n", err->message);
                fflush(stderr);
            }
            err->code = all[0];
            err->message[0] = '\0';
            status = all[0];
            MPI_Barrier(group->control);
        }
    }
    comm_finalize(group);
    return status;
}
