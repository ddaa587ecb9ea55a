/* twofold demo: the main job on bundled data: the data and the reference models, then every
 * demo row of the technique table (verify/techniques/table.h), each validated against its
 * reference before it is timed. A technique joins by adding its line to the table, not by
 * editing this.
 *
 * The distributed twins (data-parallel training, Sven's dispatch, the async protocols, the
 * vertex-partitioned trainer, the schedules) only show what they send when there are ranks to
 * send it to. So a demo started alone starts itself again under Open MPI's mpiexec on 2 ranks, in
 * place of this process (exec: the output and the exit status are the relaunched demo's), after
 * a quiet probe (the same command with --help) shows that mpiexec can start 2 copies of this
 * program here. When it cannot (no
 * mpiexec, or Open MPI refusing root), the demo runs in this process and says so in one line. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "opt/cli/options.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"
#include "ref/train.h"
#include "verify/techniques/table.h"

/* The ranks demo starts itself on: the fewest between which the distributed twins send anything. */
#define DEMO_RANKS "2"
/* Seconds the probe of mpiexec may take before demo gives up on it. */
#define PROBE_SECONDS 30.0
/* The mpiexec to start with instead of the one found at build time (a moved Open MPI, a test). */
#define MPIEXEC_VARIABLE "TWOFOLD_MPIEXEC"
/* Set in the relaunched demo's environment: a launcher that starts the copy without its ranks'
 * environment (a wrapper script, another MPI's mpiexec) would otherwise make it start itself again,
 * for ever. */
#define RELAUNCHED_VARIABLE "TWOFOLD_DEMO_RELAUNCHED"

/* Parsed arguments. */
typedef struct demo_command {
    technique_words techniques; /* the entries named */
} demo_command;

/* demo has no option of its own: its table holds its help and takes technique names. */
static const option_spec demo_options[] = {{.name = NULL}};

static const option_page demo_pages[] = {
    {0, 0,
    "usage: twofold demo [TECHNIQUE...]\n"
    "\n"
    "Load every bundled dataset and a generated graph, train the reference models briefly,\n"
    "then run the demo rows of every technique: reference against optimized twin, the\n"
    "equivalence error, and the speed (only for a twin that was equal). With TECHNIQUE names\n"
    "or stems (as twofold verify --help lists them), only those techniques' rows.\n"
    "\n"
    "The distributed twins show what they send only between ranks. Started alone, demo starts\n"
    "itself again as mpiexec -q -n 2 --oversubscribe --bind-to none twofold demo (the mpiexec\n"
    "of the Open MPI twofold was built with, or the one TWOFOLD_MPIEXEC names), so those rows\n"
    "run on 2 ranks; started by mpiexec -n R, on R ranks. When mpiexec is missing or cannot\n"
    "start (as root, Open MPI wants OMPI_ALLOW_RUN_AS_ROOT=1 and\n"
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1), demo says so in one line and runs in one process,\n"
    "where those rows send nothing.\n"
    "\n"
    "Exit status 1 when a twin was not equal (TWOFOLD_BREAK_TWIN=NAME spoils the twins of NAME\n"
    "on purpose, as for twofold verify); 2 bad input; 3 the machine failed (MPI, I/O error).\n",
     NULL},
    {0, 0, NULL, NULL},
};

/* A word that is no option names a technique. */
static int choose_technique(void *command, const char *word, tf_error *err)
{
    return technique_word("demo", &((demo_command *)command)->techniques, word, err);
}

static const option_table demo_table = {
    .command = "demo", .options = demo_options, .pages = demo_pages, .word = choose_technique};

/* Runs @p args (args[0] a path, NULL-terminated) with its output discarded, for at most
 * PROBE_SECONDS. Returns its exit status, or -1 when it did not run or did not finish. */
static int run_quietly(char *const *args)
{
    const pid_t child = fork();
    if (child == 0) {
        const int null = open("/dev/null", O_WRONLY);
        if (null >= 0 && dup2(null, STDOUT_FILENO) >= 0 && dup2(null, STDERR_FILENO) >= 0)
            execv(args[0], args);
        _exit(127);
    }
    const struct timespec pause = {0, 20000000}; /* 20 ms between looks */
    const double deadline = wall_seconds() + PROBE_SECONDS;
    int status = 0;
    while (child > 0) {
        const pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (done < 0 || wall_seconds() > deadline)
            break;
        nanosleep(&pause, NULL);
    }
    if (child > 0) { /* hung: end it */
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    return -1;
}

/* The command line that starts this demo under mpiexec: mpiexec's options, this program (with its
 * --memory-limit), "demo" and @p argv [argc]. @p self: this program's path; @p limit: a buffer
 * for the limit's digits. Returns a NULL-terminated array to free(), or NULL. */
static char **mpiexec_command(const char *mpiexec, char *self, int argc, char **argv, char *limit, size_t size)
{
    char **args = malloc((size_t)(argc + 16) * sizeof *args);
    if (!args)
        return NULL;
    int n = 0;
    const char *head[] = {mpiexec, "-q", "-n", DEMO_RANKS, "--oversubscribe", "--bind-to", "none"};
    for (size_t k = 0; k < sizeof head / sizeof *head; k++)
        args[n++] = (char *)head[k];
    args[n++] = self;
    if (tf_memory_limit()) { /* given before the command: the relaunched demo keeps its budget */
        snprintf(limit, size, "%llu", (unsigned long long)tf_memory_limit_total());
        args[n++] = "--memory-limit";
        args[n++] = limit;
    }
    args[n++] = "demo";
    for (int i = 0; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    return args;
}

/* When this demo was started alone, start it again under mpiexec on DEMO_RANKS ranks in place of
 * this process. Returns only when it did not, with @p note [size] saying why in one line. */
static void relaunch_under_mpiexec(int argc, char **argv, char *note, size_t size)
{
    static const char alone[] = "the distributed twins run on 1 rank and send nothing";
    const char *mpiexec = getenv(MPIEXEC_VARIABLE) ? getenv(MPIEXEC_VARIABLE) : TWOFOLD_MPIEXEC;
    if (getenv(RELAUNCHED_VARIABLE)) { /* an "mpiexec" that started a copy without ranks: never again */
        snprintf(note, size, "one process: %s started this demo again without a launcher's environment (no "
                             "OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), so it does not start itself a third "
                             "time; %s", mpiexec, alone);
        return;
    }
    char self[4096], limit[32];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (*mpiexec == '\0' || access(mpiexec, X_OK) != 0 || length <= 0) {
        snprintf(note, size, "one process: no mpiexec (%s%s); %s", getenv(MPIEXEC_VARIABLE) ? MPIEXEC_VARIABLE "=" : "",
                 *mpiexec || getenv(MPIEXEC_VARIABLE) ? mpiexec : "none found at build time", alone);
        return;
    }
    self[length] = '\0';
    char *help[] = {"--help"};
    char **probe = mpiexec_command(mpiexec, self, 1, help, limit, sizeof limit); /* the same start, nothing run */
    char **args = mpiexec_command(mpiexec, self, argc, argv, limit, sizeof limit);
    const int probed = probe && args ? run_quietly(probe) : -1;
    free(probe);
    if (probed == 0) {
        setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0); /* a rank waiting on rank 0 gives way to others */
        setenv(RELAUNCHED_VARIABLE, "1", 1);
        fflush(stdout);
        execv(mpiexec, args);
        snprintf(note, size, "one process: %s did not run (%s); %s", mpiexec, strerror(errno), alone);
    } else {
        /* Root without Open MPI's two settings is the common cause; otherwise mpiexec's own words
         * (discarded by the probe) say it. */
        const int root_unset = geteuid() == 0 && !(getenv("OMPI_ALLOW_RUN_AS_ROOT") &&
                                                   getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"));
        snprintf(note, size, "one process: %s could not start %s ranks (exit status %d; %s); %s", mpiexec, DEMO_RANKS,
                 probed, root_unset ? "as root, Open MPI wants OMPI_ALLOW_RUN_AS_ROOT=1 and "
                                      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" : "its own run of twofold demo says why",
                 alone);
    }
    free(args);
}

/* Loads one dataset spec and prints its row; returns a tf_error_code. */
static int demo_dataset(const char *spec, const char *label, tf_error *err)
{
    cli_progress_state progress = {0, ""};
    dataset_options options = {0, cli_progress, &progress, NULL, NULL};
    dataset d;
    double started = wall_seconds();
    if (dataset_load(spec, &options, &d, err) != TF_OK)
        return err->code;
    double seconds = wall_seconds() - started;
    dataset_summary s;
    int status = dataset_summarize(&d, &s, err);
    if (status == TF_OK) {
        char shape[64];
        if (d.kind == DATASET_SNAPSHOTS)
            snprintf(shape, sizeof shape, "%lld snapshots, %.0f edges each", (long long)s.steps, s.edges.mean_edges);
        else
            snprintf(shape, sizeof shape, "%lld events", (long long)s.steps);
        printf("  %-16s %-9s %9lld vertices  %-34s %8.3f s\n", label, d.kind == DATASET_SNAPSHOTS ? "snapshots" : "events",
               (long long)s.vertices, shape, seconds);
    }
    dataset_free(&d);
    return status;
}

/* Trains one model briefly on a bundled dataset and prints its row. */
static int demo_model(model_kind kind, const char *data, tf_error *err)
{
    dataset d;
    if (dataset_load(data, NULL, &d, err) != TF_OK)
        return err->code;
    model_config config = {kind, 0, 32, 0, 2, 0};
    train_options options;
    train_options_default(&options);
    options.epochs = 20;
    options.train_ratio = 0.2;
    trainer tr;
    int status = trainer_create(&tr, &d.snapshots, &config, &options, err);
    double started = wall_seconds(), first_mse = 0;
    epoch_report report = {0};
    while (status == TF_OK && tr.epoch < options.epochs) {
        status = trainer_epoch(&tr, &d.snapshots, &report, err);
        if (report.epoch == 1)
            first_mse = report.test_mse;
    }
    if (status == TF_OK)
        printf("  %-10s on %-12s 20 epochs: test MSE %.4f (after epoch 1: %.4f)  %6.2f s\n", model_kind_name(kind),
               d.name, report.test_mse, first_mse, wall_seconds() - started);
    trainer_free(&tr); /* trainer_create leaves a freeable trainer even when it fails */
    dataset_free(&d);
    return status;
}

/* The data and the reference models: rank 0 alone. */
static int demo_data_and_models(tf_error *err)
{
    int status = TF_OK;
    printf("\ndata (loaded by ref/, timed on this machine):\n");
    for (const bundled_dataset *b = bundled_datasets; status == TF_OK && b->name; b++)
        status = demo_dataset(b->name, b->name, err);
    if (status == TF_OK)
        status = demo_dataset("powerlaw:nodes=100000,edges=1000000,snapshots=5,churn=0.01,seed=1", "powerlaw 1M edges",
                              err);
    if (status == TF_OK)
        status = demo_dataset("events:nodes=10000,events=1000000,repeat=0.5,seed=1", "events 1M", err);
    if (status == TF_OK)
        printf("\nmodels (ref/, chapter 01; train ratio 0.2, lr 0.01, hidden 32):\n");
    for (int kind = 0; status == TF_OK && kind < MODEL_COUNT; kind++)
        status = demo_model((model_kind)kind, "chickenpox", err);
    return status;
}

/* The demo rows of the chosen techniques, validated, then timed, through the table's loop. */
static int demo_techniques(const demo_command *c, comm *group, engine_tally *tally, tf_error *err)
{
    if (group->rank == 0)
        printf("\ntechniques (ref vs twin, validated before timed; the distributed twins on %d rank(s)):\n",
               group->size);
    engine_row rows[128];
    const unsigned char *chosen = c->techniques.any ? c->techniques.chosen : NULL;
    const int count = technique_demo_rows(chosen, getenv("TWOFOLD_BREAK_TWIN"), rows, 128);
    engine_options options = {.timed = 1, .repeats = 3, .threads = 1, .group = group};
    return engine_run_rows(rows, count, &options, tally, err);
}

int command_demo(int argc, char **argv, tf_error *err)
{
    demo_command c;
    memset(&c, 0, sizeof c);
    option_parse parsed;
    if (options_parse(&demo_table, argc, argv, &c, &parsed, err) == TF_OK && parsed.help) {
        options_help(&demo_table, -1, stdout);
        return TF_OK;
    }
    char note[512] = "";
    if (err->code == TF_OK && !started_by_launcher())
        relaunch_under_mpiexec(argc, argv, note, sizeof note);
    comm group;
    const int started = start_agreed_ranks(&group, argc, argv, err);
    if (started != TF_OK)
        return started;
    int status = TF_OK;
    if (group.rank == 0) {
        printf("twofold demo\n");
        if (note[0])
            printf("%s\n", note);
        if (!c.techniques.any)
            status = demo_data_and_models(err);
    }
    engine_tally tally = {0, 0, 0, 0, 0};
    if (status == TF_OK)
        status = demo_techniques(&c, &group, &tally, err);
    finish_ranks(&group, status, err);
    if (status == TF_OK && tally.wrong > 0)
        return tf_error_set(err, EXIT_WRONG, "demo: %d technique row(s) not equal to the reference", tally.wrong);
    return status;
}
