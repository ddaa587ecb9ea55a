/* peak_rss COMMAND [ARG...]: run COMMAND and report the most memory it ever held resident.
 *
 * Sampling /proc/PID/status from outside can miss a short peak; the kernel keeps the high
 * mark itself and hands it to the parent with the exit status (wait4's ru_maxrss, in KiB).
 * The command's own output passes through unchanged; the last line on stderr is
 * "peak_rss: N KiB", and the exit status is the command's (128 + the signal if it was killed,
 * as a shell reports it), so a script checks both. Used by verify/test_memory_budget.sh. */
#define _DEFAULT_SOURCE  /* wait4 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("usage: peak_rss COMMAND [ARG...]\n", stderr);
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("peak_rss: fork");
        return 2;
    }
    if (child == 0) {
        execvp(argv[1], argv + 1);
        perror("peak_rss: exec");
        _exit(127);
    }
    int status;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) != child) {
        perror("peak_rss: wait4");
        return 2;
    }
    fprintf(stderr, "peak_rss: %ld KiB\n", usage.ru_maxrss);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
