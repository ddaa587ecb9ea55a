/* The main of an MPI test, written once: start the communicator, run the suite on every rank
 * with rank 0 reporting and the others silent, shut MPI down. Separate from verify/testing.h so
 * that the CPU-only tests need no MPI headers. Header-only, test-only.
 *
 * A test's main is then:
 *     if (start_mpi(&world, &argc, &argv, 0) != 0)
 *         return 1;
 *     ...build the suite...
 *     return run_suite_mpi(suite, &world);
 */
#ifndef TWOFOLD_VERIFY_TESTING_MPI_H
#define TWOFOLD_VERIFY_TESTING_MPI_H

#include "opt/comm.h"
#include "verify/testing.h"

/* comm_init() for a test program (@p want_gpu as there). Rank 0 prints the rank count and the
 * transport chosen. Returns 0, or 1 after printing the error (MPI is then not running). */
static inline int start_mpi(comm *world, int *argc, char ***argv, int want_gpu)
{
    char reason[256];
    tf_error err;
    if (comm_init(world, argc, argv, want_gpu, reason, sizeof reason, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    if (world->rank == 0)
        printf("%d rank(s): %s\n", world->size, reason);
    return 0;
}

/* Stop a test program whose suite cannot run here: @p why on stderr, MPI shut down. Returns the
 * exit status 1. */
static inline int stop_mpi(comm *world, const char *why)
{
    fprintf(stderr, "%s\n", why);
    comm_finalize(world);
    return 1;
}

/* Run @p suite on this rank (rank 0 prints the results, the other ranks run silently), free it,
 * then comm_finalize(). Returns this rank's exit status: 0 when every test passed. Tests run in
 * this process, never in a forked child, whatever CK_FORK says: a child forked after MPI_Init
 * shares the parent's MPI state but not its pid, so Open MPI's shared-memory transport reads
 * the wrong process ("Read -1 ... errno = 14") and messages arrive corrupted. */
static inline int run_suite_mpi(Suite *suite, comm *world)
{
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_NOFORK);
    srunner_run_all(runner, world->rank == 0 ? CK_NORMAL : CK_SILENT);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    comm_finalize(world);
    return failed == 0 ? 0 : 1;
}

#endif
